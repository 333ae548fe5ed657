#!/bin/sh
# merge.sh OUT.pdf IN.pdf... : merge PDFs with qpdf.
set -eu
out=$1; shift
exec qpdf --empty --pages "$@" -- "$out"
