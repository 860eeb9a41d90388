#!/usr/bin/env python3
"""The source tree's layers, checked on the objects the build made.

Reads the rules from docs/layers.md (the block between the 'layers:' and
'end layers' markers: one line per folder of lib/, naming the folders it
may use), then, from `nm` of every object file of the library and of the
CLI, which object uses a symbol which other object defines, and from the
sources, which private header each file includes.  Fails on:
  - a circle among the library's objects, or among the CLI's;
  - a library object using a folder its rule does not name, or a file
    including a private header of such a folder;
  - a library source outside the folders the rules name;
  - a CLI object using anything of the library but its public API
    (include/dsostore.h: ds_ names, never ds__).
Usage: layers.py SOURCE_DIR BUILD_DIR
"""
import collections
import glob
import os
import re
import subprocess
import sys

src, build = sys.argv[1], sys.argv[2]
problems = []


def rules():
    text = open(os.path.join(src, 'docs', 'layers.md')).read()
    m = re.search(r'^\s*layers:\s*$(.*?)^\s*end layers\s*$', text, re.M | re.S)
    if not m:
        sys.exit('docs/layers.md: no "layers:" ... "end layers" block')
    allowed = collections.OrderedDict()
    for line in m.group(1).splitlines():
        line = line.strip()
        if not line:
            continue
        name, _, uses = line.partition(':')
        allowed[name.strip()] = set(uses.split())
    for name, uses in allowed.items():
        for u in uses:
            if u not in allowed:
                problems.append('docs/layers.md: %s may use %s, which is no folder' % (name, u))
    return allowed


def objects(target):
    root = os.path.join(build, 'CMakeFiles', target + '.dir')
    out = {}
    for o in sorted(glob.glob(os.path.join(root, '**', '*.o'), recursive=True)):
        rel = os.path.relpath(o, root)
        if rel.endswith('.c.o'):
            rel = rel[:-4]
        # Generated sources (protoc-c's) are built from the build dir; an
        # object whose source has moved away is a stale one of this build.
        if rel.startswith(('lib/', 'tools/')) and os.path.exists(os.path.join(src, rel + '.c')):
            out[rel] = o
    if not out:
        sys.exit('no objects of %s under %s: build first' % (target, root))
    return out


def symbols(objs):
    defs, uses = {}, {}
    for name, path in objs.items():
        res = subprocess.run(['nm', '-P', path], capture_output=True, text=True, check=True)
        uses[name] = set()
        for line in res.stdout.splitlines():
            f = line.split()
            if len(f) < 2:
                continue
            if f[1] == 'U':
                uses[name].add(f[0])
            elif f[1].isupper() and f[1] not in 'UN':
                defs.setdefault(f[0], name)
    return defs, uses


def edges(defs, uses):
    e = {n: collections.defaultdict(set) for n in uses}
    for n, syms in uses.items():
        for s in syms:
            d = defs.get(s)
            if d and d != n:
                e[n][d].add(s)
    return e


def circles(e):
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(e[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in e:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(e[w]))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(e):
        if v not in index:
            visit(v)
    return out


def report_circles(e, what):
    for comp in circles(e):
        lines = ['a circle among %s: %s' % (what, ' '.join(comp))]
        for a in comp:
            for b in comp:
                if b in e[a]:
                    lines.append('    %s uses %s: %s' % (a, b, ' '.join(sorted(e[a][b])[:6])))
        problems.append('\n'.join(lines))


def folder(path):
    parts = path.split('/')
    return parts[1] if len(parts) > 2 and parts[0] == 'lib' else None


allowed = rules()
lib_objs = objects('ds_objects')
lib_defs, lib_uses = symbols(lib_objs)
lib_e = edges(lib_defs, lib_uses)
report_circles(lib_e, "the library's objects")

for name in sorted(lib_objs):
    f = folder(name)
    if f not in allowed:
        problems.append('%s: not in a folder docs/layers.md names' % name)
        continue
    for other, syms in sorted(lib_e[name].items()):
        g = folder(other)
        if g != f and g not in allowed[f]:
            problems.append('%s (%s) uses %s (%s), which its layer may not: %s' %
                            (name, f, other, g, ' '.join(sorted(syms)[:6])))

# Private headers: a file may include those of its own folder and of the
# folders it may use.
headers = {}
for h in glob.glob(os.path.join(src, 'lib', '**', '*.h'), recursive=True):
    rel = os.path.relpath(h, src)
    if os.path.basename(rel) in headers:
        problems.append('two private headers named %s' % os.path.basename(rel))
    headers[os.path.basename(rel)] = rel
inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
for path in sorted(glob.glob(os.path.join(src, 'lib', '**', '*.[ch]'), recursive=True)):
    rel = os.path.relpath(path, src)
    f = folder(rel)
    if f is None:
        problems.append('%s: a source outside the layers\' folders' % rel)
        continue
    for inc in inc_re.findall(open(path, errors='replace').read()):
        h = headers.get(os.path.basename(inc))
        if h is None:
            continue
        g = folder(h)
        if g != f and g not in allowed.get(f, ()):
            problems.append('%s (%s) includes %s (%s), which its layer may not' % (rel, f, h, g))

# File names unique across lib/ and tools/.
seen = {}
for path in glob.glob(os.path.join(src, 'lib', '**', '*.c'), recursive=True) + \
        glob.glob(os.path.join(src, 'tools', '*.c')):
    base = os.path.basename(path)
    if base in seen:
        problems.append('two files named %s: %s and %s' %
                        (base, seen[base], os.path.relpath(path, src)))
    seen[base] = os.path.relpath(path, src)

# The CLI: no circle among its files, and only the library's public API.
cli_objs = objects('dsostore_cli')
cli_defs, cli_uses = symbols(cli_objs)
report_circles(edges(cli_defs, cli_uses), "the CLI's objects")
for name in sorted(cli_objs):
    private = sorted(s for s in cli_uses[name] if s in lib_defs and s.startswith('ds__'))
    if private:
        problems.append('%s uses the library\'s private %s' % (name, ' '.join(private[:6])))

for p in problems:
    print(p)
n_lib = len(lib_objs)
print('layers: %d library objects in %d folders, %d CLI objects: %s' %
      (n_lib, len(allowed), len(cli_objs), 'FAIL' if problems else 'ok'))
sys.exit(1 if problems else 0)
