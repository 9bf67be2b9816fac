#!/usr/bin/env python3
"""No import cycle between the crate's top-level modules.

Builds the graph of `crate::X` paths used by each top-level module of src/ (non-test code,
comments and doc links left out: they are not imports) and reports every strongly connected
group of more than one module. Exit 1 when there is one. Usage: python3 .ci/cycles.py [src]
"""
import os,re,sys,itertools
root=sys.argv[1] if len(sys.argv)>1 else 'src'
mods={}
for dp,dn,fn in os.walk(root):
    for f in fn:
        if not f.endswith('.rs'): continue
        p=os.path.join(dp,f); rel=os.path.relpath(p,root)
        top=rel.split(os.sep)[0].replace('.rs','')
        if top in ('lib','main'): continue
        txt=open(p).read()
        # strip test modules crudely: ignore content after '#[cfg(test)]'
        i=txt.find('#[cfg(test)]')
        if i>=0: txt=txt[:i]
        txt="\n".join(l for l in txt.split("\n") if not l.strip().startswith("//")); deps=set(re.findall(r"crate::([a-z_]+)",txt))
        # super:: within a submodule of top refers to top itself; ignore
        mods.setdefault(top,set()).update(d for d in deps if d!=top)
# find cycles (SCCs)
idx={};low={};st=[];on=set();res=[];c=[0]
def sc(v):
    idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in mods.get(v,()):
        if w not in mods: continue
        if w not in idx: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        if len(comp)>1: res.append(comp)
sys.setrecursionlimit(10000)
for v in list(mods):
    if v not in idx: sc(v)
print("import cycles between top-level modules (non-test code):", res if res else "none")
for comp in res:
    for a in comp:
        for b in comp:
            if b in mods[a]: print(f"  {a} -> {b}")
sys.exit(1 if res else 0)
