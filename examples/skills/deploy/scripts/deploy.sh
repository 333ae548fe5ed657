#!/usr/bin/env bash
# Deploys VERSION to ENV. Refuses a dirty working tree.
set -euo pipefail
env=${1:?usage: deploy.sh ENV VERSION}
version=${2:?usage: deploy.sh ENV VERSION}
if [ -n "$(git status --porcelain)" ]; then
  echo "refusing to deploy: the working tree has uncommitted changes" >&2
  exit 1
fi
echo "deploying $version to $env"
