#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds tests/gen/flameprog into DIR: DIR/fg and DIR/libfgl.so (gcc -O2 -g
# -fno-omit-frame-pointer).  Run by the flame graph tests as
#   bash "$DS_SRC/tests/gen/flameprog/build.sh" DIR
# Status 1, with gcc's words on stderr, if it cannot.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$1"
cp "$here/fg.c" "$here/fgl.c" .
cflags="-O2 -g -fno-omit-frame-pointer"
gcc $cflags -fPIC -shared -o libfgl.so fgl.c
gcc $cflags -o fg fg.c -L. -lfgl -Wl,-rpath,'$ORIGIN'
