#!/bin/sh
# Example only: deploys SERVICE at VERSION to the canary slot and checks it.
set -eu
service=$1 version=$2
echo "canary: $service $version (example script, does nothing)"
