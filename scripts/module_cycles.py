#!/usr/bin/env python3
"""Import cycles between sibling modules, in every crate of the workspace.

A file's references are its `use crate::…`, `use super::…` lines and the `crate::a::…` /
`super::a::…` paths in its code (comments and strings removed). A reference from module `m` to a
sibling `n` (two modules with the same parent: two top-level modules of a crate, or two files of
one folder) is an edge m → n. A parent and its own children are one unit (a folder's `mod.rs`
declares and re-exports them), so parent↔child references are not edges. Prints every cycle
and exits 1 when there is one (ARCHITECTURE.md, "Layering").

    python3 scripts/module_cycles.py            # the whole workspace
    python3 scripts/module_cycles.py --graph    # and every sibling edge
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def strip(text):
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\])'", "''", text)
    return text


def module_path(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ('lib', 'main', 'mod'):
        rel = rel[:-1]
    return rel


def expand_use(tree):
    """`a::{b, c::{d, e}}` → [a::b, a::c::d, a::c::e]."""
    tree = tree.replace(' ', '').replace('\n', '')
    out = []

    def go(prefix, t):
        i = t.find('{')
        if i < 0:
            out.append(prefix + t)
            return
        head, body = t[:i], t[i + 1:-1]
        depth, start = 0, 0
        for j, ch in enumerate(body):
            if ch == '{':
                depth += 1
            elif ch == '}':
                depth -= 1
            elif ch == ',' and depth == 0:
                go(prefix + head, body[start:j])
                start = j + 1
        go(prefix + head, body[start:])

    go('', tree)
    return [p for p in out if p]


def references(text, me):
    """Absolute module paths (lists) this file refers to."""
    paths = []
    for m in re.finditer(r'\buse\s+([^;]+);', text):
        paths += expand_use(m.group(1))
    paths += re.findall(r'\b((?:crate|super)(?:::\w+)+)', text)
    out = []
    for p in paths:
        parts = [x for x in p.split('::') if x]
        if not parts:
            continue
        if parts[0] == 'crate':
            out.append(parts[1:])
        elif parts[0] == 'super':
            base = list(me)
            while parts and parts[0] == 'super':
                base = base[:-1]
                parts = parts[1:]
            out.append(base + parts)
        elif parts[0] == 'self':
            out.append(list(me) + parts[1:])
    return out


def reexports(src, files):
    """Names a module file re-exports (`pub use a::b::Name;`), mapped to the module path the
    name comes from: `crate::Begin` is `crate::store::Begin` when lib.rs says so."""
    out = {}
    for f in files:
        me = tuple(module_path(src, f))
        text = strip(open(f, encoding='utf-8').read())
        for m in re.finditer(r'\bpub\s+use\s+([^;]+);', text):
            for path in expand_use(m.group(1)):
                parts = [x for x in path.split('::') if x]
                name = parts[-1].split(' as ')[-1] if parts else ''
                if ' as ' in path:
                    name = path.split(' as ')[-1]
                    parts = path.split(' as ')[0].split('::')
                if parts and parts[0] == 'crate':
                    full = parts[1:]
                elif parts and parts[0] == 'super':
                    full = list(me[:-1]) + parts[1:]
                elif parts and parts[0] == 'self':
                    full = list(me) + parts[1:]
                else:
                    full = list(me) + parts
                out[me + (name,)] = tuple(full[:-1])
    return out


def crate_cycles(src, graph=None):
    files = []
    for d, _, names in os.walk(src):
        for n in names:
            if n.endswith('.rs'):
                files.append(os.path.join(d, n))
    modules = {tuple(module_path(src, f)) for f in files}
    # Folders of bins are crates of their own.
    modules = {m for m in modules if not (m and m[0] == 'bin')}
    exported = reexports(src, [f for f in files if not module_path(src, f)[:1] == ['bin']])
    edges = {}
    for f in files:
        me = tuple(module_path(src, f))
        if me and me[0] == 'bin':
            continue
        text = strip(open(f, encoding='utf-8').read())
        for ref in references(text, me):
            # The longest known module the path names; a name a module re-exports counts as
            # the module it comes from.
            target = ()
            for k in range(len(ref), 0, -1):
                if tuple(ref[:k]) in modules:
                    target = tuple(ref[:k])
                    break
            for _ in range(4):
                via = exported.get(target + tuple(ref[len(target):len(target) + 1]))
                if via is None or via == target or via not in modules:
                    break
                ref = list(via) + ref[len(target) + 1:]
                target = via
            # Reduce to siblings: the first components where the two paths part.
            k = 0
            while k < len(me) and k < len(target) and me[k] == target[k]:
                k += 1
            if k >= len(me) or k >= len(target):
                continue  # one contains the other: parent and child
            a, b = me[:k + 1], target[:k + 1]
            edges.setdefault(a, set()).add(b)
    if graph is not None:
        graph.update(edges)
    cycles = []
    seen = set()

    def dfs(node, stack, on):
        for nxt in sorted(edges.get(node, ())):
            if nxt in on:
                cyc = stack[stack.index(nxt):] + [nxt]
                key = frozenset(cyc)
                if key not in seen:
                    seen.add(key)
                    cycles.append(cyc)
            elif len(stack) < 12:
                dfs(nxt, stack + [nxt], on | {nxt})

    for n in sorted(edges):
        dfs(n, [n], {n})
    return cycles


def main():
    found = 0
    show = '--graph' in sys.argv
    crates = []
    for d in sorted(os.listdir(os.path.join(ROOT, 'crates'))):
        crates.append(os.path.join(ROOT, 'crates', d, 'src'))
    crates.append(os.path.join(ROOT, 'web', 'src'))
    for extra in ('bench',):
        b = os.path.join(ROOT, extra)
        for d in sorted(os.listdir(b)) if os.path.isdir(b) else []:
            s = os.path.join(b, d, 'src')
            if os.path.isdir(s):
                crates.append(s)
    for src in crates:
        if not os.path.isdir(src):
            continue
        graph = {}
        name = os.path.relpath(os.path.dirname(src), ROOT)
        for cyc in crate_cycles(src, graph):
            found += 1
            print(f"{name}: " + ' → '.join('::'.join(m) for m in cyc))
        if show:
            for a in sorted(graph):
                targets = ', '.join('::'.join(b) for b in sorted(graph[a]))
                print(f"  {name}: {'::'.join(a)} -> {targets}")
    if found:
        sys.exit(1)
    print('no import cycles between sibling modules')


if __name__ == '__main__':
    main()
