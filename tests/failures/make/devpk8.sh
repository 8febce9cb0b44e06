#!/usr/bin/env bash
# Families of issue 40 (r16 after, devpk8), made with the real programs:
#  - gcc + CPython 3.11 (here): a stable-ABI extension that calls PyType_FromMetaclass (a C-API
#    function Python 3.11 does not export), imported by python3.11 and loaded with ctypes
#    (import: undefined-symbol-python-c-api)
# Writes rounds/d10/cases/real-python-c-api-symbol-newer-python.log (the .toml answer is
# committed beside it).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d10/cases
t=$(mktemp -d)
mkdir -p "$t/site-packages/fastkern"
cat > "$t/ext.c" <<'C'
/* Declared by hand: Python 3.11's headers do not have it (3.12 added it). */
typedef struct _object PyObject;
extern PyObject *PyType_FromMetaclass(PyObject *, PyObject *, void *, PyObject *);
PyObject *PyInit__fastkern(void) { return PyType_FromMetaclass(0, 0, 0, 0); }
C
gcc -shared -fPIC -o "$t/site-packages/fastkern/_fastkern.abi3.so" "$t/ext.c"
printf 'from fastkern import _fastkern\n' > "$t/site-packages/fastkern/__init__.py"
{
  (cd "$t" && PYTHONPATH="$t/site-packages" python3.11 -c 'import fastkern' 2>&1)
  (cd "$t" && python3.11 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' \
     "$t/site-packages/fastkern/_fastkern.abi3.so" 2>&1)
} | sed -e "s|$t|/venv/lib/python3.11|g" -e "s|/root/.pyenv/versions/3.11.7|/usr|g" > "$cases/real-python-c-api-symbol-newer-python.log"
rm -rf "$t"
