# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Nsight Systems for the GPU scripts (scripts/gpu-bench.sh), sourced, not run:
#
#   nsys_find                 sets NSYS (the nsys CLI) and NSYS_IMPORTER (its QdstrmImporter);
#                             returns 1, saying why on stderr, when nsys is not found
#   nsys_libs CMD...          runs CMD with $NSYS_LIBDIR in front of LD_LIBRARY_PATH
#   nsys_to_sqlite DIR        turns the recordings in DIR into reports and SQLite exports
#
# Where nsys is looked for: $NSYS if set, else `nsys` on PATH, else the newest of
# /opt/nvidia/nsight-systems/*/bin/nsys, else of /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys
# (the copy that comes with Nsight Compute). QdstrmImporter: $NSYS_IMPORTER if set, else beside
# nsys' folder (<version>/host-linux-x64/ for Nsight Systems, host/linux-desktop-*-x64/ for the
# copy in Nsight Compute).
#
# `nsys profile` records a .qdstrm and then imports it into a .nsys-rep itself. On a host where
# the importer cannot start for lack of elfutils' libdw.so.1 / libelf.so.1, the .qdstrm is left
# behind; nsys_to_sqlite imports it then. Set NSYS_LIBDIR to a folder holding the two libraries
# (for instance unpacked from Debian's or Ubuntu's libdw1 and libelf1 packages:
#   apt-get download libdw1 libelf1 && for f in libdw1_*.deb libelf1_*.deb; do dpkg -x "$f" nsys-libs; done
#   export NSYS_LIBDIR=$PWD/nsys-libs/usr/lib/x86_64-linux-gnu
# ): it is put in front of LD_LIBRARY_PATH for the importer, `nsys export` and `nsys recipe`
# only, never for the profiled program.

# _nsys_newest GLOB...: the last (by version order) executable file among the paths given.
_nsys_newest() {
  local f
  for f in "$@"; do [ -x "$f" ] && printf '%s\n' "$f"; done | sort -V | tail -n 1
}

nsys_find() {
  if [ -n "${NSYS:-}" ]; then
    local given=$NSYS
    if ! NSYS=$(command -v "$given") || [ ! -f "$NSYS" ] || [ ! -x "$NSYS" ]; then
      echo "nsys not found: NSYS='$given' is not an executable file" >&2
      NSYS=
      return 1
    fi
  else
    NSYS=$(command -v nsys || true)
    [ -n "$NSYS" ] || NSYS=$(_nsys_newest /opt/nvidia/nsight-systems/*/bin/nsys)
    [ -n "$NSYS" ] || NSYS=$(_nsys_newest /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys)
    if [ -z "$NSYS" ]; then
      echo "nsys not found: not on PATH, NSYS not set, and none under" \
        "/opt/nvidia/nsight-systems/*/bin/ or /opt/nvidia/nsight-compute/*/host/target-linux-x64/" >&2
      return 1
    fi
  fi
  export NSYS
  if [ -z "${NSYS_IMPORTER:-}" ]; then
    local bin
    bin=$(dirname "$(readlink -f "$NSYS")")
    NSYS_IMPORTER=$(_nsys_newest "$bin"/QdstrmImporter "$bin"/../*/QdstrmImporter)
    [ -z "$NSYS_IMPORTER" ] || NSYS_IMPORTER=$(readlink -f "$NSYS_IMPORTER")
  fi
  export NSYS_IMPORTER
  if [ -n "${NSYS_LIBDIR:-}" ] && [ ! -e "$NSYS_LIBDIR/libdw.so.1" ]; then
    echo "warning: NSYS_LIBDIR=$NSYS_LIBDIR holds no libdw.so.1" >&2
  fi
  echo "nsys: $NSYS ($("$NSYS" --version 2>/dev/null | head -n 1))"
  if [ -z "$NSYS_IMPORTER" ]; then
    echo "QdstrmImporter: not found beside nsys (set NSYS_IMPORTER): a .qdstrm that nsys leaves" \
      "behind cannot be imported"
  else
    echo "QdstrmImporter: $NSYS_IMPORTER"
    local missing
    missing=$(nsys_libs ldd "$NSYS_IMPORTER" 2>/dev/null | grep 'not found' | tr -s ' \t' ' ')
    if [ -n "$missing" ]; then
      echo "QdstrmImporter lacks:$missing; set NSYS_LIBDIR to a folder holding them (scripts/lib/nsys.sh)"
    fi
  fi
  return 0
}

nsys_libs() {
  if [ -n "${NSYS_LIBDIR:-}" ]; then
    LD_LIBRARY_PATH=$NSYS_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"
  else
    "$@"
  fi
}

# nsys_to_sqlite DIR: every DIR/X.qdstrm is imported into DIR/X.nsys-rep (then removed), and every
# DIR/X.nsys-rep without DIR/X.sqlite is exported to it (nsys export --type sqlite). Prints what
# it did; returns 1 if any recording or report could not be converted.
nsys_to_sqlite() {
  local dir=$1 f rep bad=0
  for f in "$dir"/*.qdstrm; do
    [ -e "$f" ] || continue
    rep=${f%.qdstrm}.nsys-rep
    if [ -z "${NSYS_IMPORTER:-}" ]; then
      echo "cannot import $f: no QdstrmImporter" >&2
      bad=1
      continue
    fi
    if nsys_libs "$NSYS_IMPORTER" -i "$f" && [ -f "$rep" ]; then
      rm -f "$f"
      echo "imported $f -> $rep"
    else
      echo "import failed: $f (libdw.so.1 missing? see NSYS_LIBDIR in scripts/lib/nsys.sh)" >&2
      bad=1
    fi
  done
  for rep in "$dir"/*.nsys-rep; do
    [ -e "$rep" ] || continue
    f=${rep%.nsys-rep}.sqlite
    [ -f "$f" ] && continue
    if nsys_libs "$NSYS" export --type sqlite --force-overwrite true -o "$f" "$rep" && [ -f "$f" ]; then
      echo "exported $rep -> $f"
    else
      echo "export failed: $rep" >&2
      bad=1
    fi
  done
  return "$bad"
}
