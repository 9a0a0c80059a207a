"""The HTML report's inline CSS and JavaScript (no fonts, no network: system font stacks).

Colours are CSS variables, swapped under ``prefers-color-scheme: dark`` (print is always light:
paper is white); print CSS drops the scroll boxes and shows folded content (``::details-content``;
the script also opens every ``<details>`` before printing, for browsers without it). The script only
adds cross-highlighting and that: the page is complete without it.
"""

from __future__ import annotations

#: Theme style name -> CSS class (short: an HLO module has hundreds of thousands of styled runs).
STYLE_CLASSES: dict[str, str] = {
    "jaxpr.primitive": "p", "jaxpr.var": "v", "jaxpr.type": "t", "jaxpr.literal": "li", "jaxpr.param": "pa",
    "jaxpr.keyword": "k", "jaxpr.location": "lo", "jaxpr.label": "lb",
    "hlo.op": "p", "hlo.value": "v", "hlo.type": "t", "hlo.attr": "pa", "hlo.number": "li",
    "hlo.comment": "cm", "hlo.string": "s",
    "jitscope.title": "ti", "jitscope.heading": "hd", "jitscope.muted": "mu", "jitscope.good": "good",
    "jitscope.warn": "warn", "jitscope.bad": "bad", "jitscope.path": "path", "jitscope.number": "num",
    "lint.error": "bad", "lint.warning": "warn", "lint.info": "info", "lint.code": "rc",
    "bench.run": "c0", "bench.compile": "c1",
}

CSS = """
:root{--bg:#fff;--fg:#1f2328;--mu:#59636e;--bd:#d1d9e0;--box:#f6f8fa;--hl:#fff5b1;--sel:#ffdf5d;
--p:#0550ae;--v:#953800;--t:#116329;--li:#8250df;--cm:#6e7781;--good:#1a7f37;--warn:#9a6700;--bad:#cf222e;
--c0:#0969da;--c1:#bf3989;--c2:#1a7f37;--c3:#bc4c00;--c4:#8250df;--c5:#6e7781;--c6:#0598bc;--c7:#cf222e;
color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--mu:#9198a1;--bd:#3d444d;--box:#151b23;
--hl:#3b2e00;--sel:#6b5200;--p:#79c0ff;--v:#ffa657;--t:#7ee787;--li:#d2a8ff;--cm:#8b949e;--good:#3fb950;
--warn:#d29922;--bad:#f85149;--c0:#4493f8;--c1:#f778ba;--c2:#3fb950;--c3:#f0883e;--c4:#ab7df8;--c5:#9198a1;
--c6:#39c5cf;--c7:#f85149}}
*{box-sizing:border-box}
body{margin:0;padding:1rem 1.5rem;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
h1{font-size:1.3rem;margin:.2rem 0 .8rem}h2{font-size:1.15rem;margin:1.6rem 0 .4rem;
border-bottom:2px solid var(--bd);padding-bottom:.2rem}h3{font-size:1rem;margin:1rem 0 .3rem}
h3 small,h2 small{color:var(--mu);font-weight:normal;margin-left:.6rem}
code,.code,pre,table.kv td:last-child{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{border-collapse:collapse;margin:.3rem 0}th,td{padding:.15rem .7rem .15rem 0;text-align:left;vertical-align:top}
th{color:var(--mu);font-weight:600;border-bottom:1px solid var(--bd)}td.r,th.r{text-align:right}
.kv td:first-child{color:var(--mu)}.kv td:last-child{text-align:right}
.code{background:var(--box);border:1px solid var(--bd);border-radius:6px;padding:.4rem 0;overflow:auto;
max-height:75vh;white-space:pre}
.code-title{font-weight:600;margin:.5rem 0 .2rem;color:var(--mu)}
.l{padding:0 .6rem;min-height:1.4em}.l.mark{background:color-mix(in srgb,var(--warn) 12%,transparent)}
.l[data-src],.l[data-ops]{cursor:pointer}.l:hover{outline:1px solid var(--bd)}
.l.hl{background:var(--hl)}.l.sel{background:var(--sel)}
.n{color:var(--mu);user-select:none}.note{color:var(--mu);font-style:italic}
details.fold>summary{list-style:none;cursor:pointer}details.fold>summary::-webkit-details-marker{display:none}
details.fold>summary .l::after{content:"";}details.fold:not([open])>summary .l::after{content:" …";color:var(--mu)}
details.fold{margin:0}details.sec>summary{cursor:pointer}details.sec>summary h3{display:inline}
.panels{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,3fr);gap:0 1.2rem;align-items:start}
.panels>.panel:first-child{position:sticky;top:0;grid-row:span 3}
.p{color:var(--p);font-weight:600}.v{color:var(--v)}.t{color:var(--t)}.li{color:var(--li)}.pa,.cm,.lo,.mu{color:var(--mu)}
.cm{font-style:italic}.s{color:var(--t)}.k,.lb,.ti,.hd{font-weight:600}.good{color:var(--good)}
.warn{color:var(--warn)}.bad,.error{color:var(--bad);font-weight:600}.path{color:var(--c0)}.num{color:var(--c6)}
.info{color:var(--c0)}.rc{color:var(--li);font-weight:600}
.note-box{border-left:4px solid var(--c0);padding:.2rem .6rem;margin:.4rem 0;background:var(--box)}
.note-box.warning{border-color:var(--warn)}.note-box.error{border-color:var(--bad)}.note-box.good{border-color:var(--good)}
.code u{text-decoration:underline wavy;text-decoration-skip-ink:none;text-underline-offset:3px}
nav.toc ul{margin:.2rem 0 1rem;padding-left:1.2rem;columns:2 22rem}nav.toc small{color:var(--mu)}
a{color:var(--c0)}
pre.out{background:var(--box);padding:.4rem .6rem;border-radius:6px;white-space:pre-wrap}
svg.chart{max-width:100%;height:auto;display:block;margin:.4rem 0}
svg .lab,svg .val{fill:var(--fg);font-size:11px}svg .val{fill:var(--mu)}svg .axis{stroke:var(--mu)}
svg .c0{fill:var(--c0)}svg .c1{fill:var(--c1)}svg .c2{fill:var(--c2)}svg .c3{fill:var(--c3)}svg .c4{fill:var(--c4)}
svg .c5{fill:var(--c5)}svg .c6{fill:var(--c6)}svg .c7{fill:var(--c7)}
svg .fit{stroke-width:1.5;stroke-dasharray:5 3}svg .s0{stroke:var(--c0)}svg .s1{stroke:var(--c1)}
svg .box{fill:color-mix(in srgb,var(--c0) 20%,transparent);stroke:var(--c0)}svg .med{stroke:var(--bad);stroke-width:2}
svg .dot{fill:var(--c0);opacity:.7}
svg .re{fill:none;stroke:var(--warn);stroke-width:1.5}svg .relab{fill:var(--warn);font-size:11px}
svg .grid{stroke:var(--bd)}svg .span:hover rect{opacity:.75}
footer{margin-top:2rem;color:var(--mu);font-size:12px;border-top:1px solid var(--bd);padding-top:.4rem}
footer dl{display:flex;flex-wrap:wrap;gap:.2rem 1.2rem;margin:0}footer dt{font-weight:600}footer dd{margin:0 0 0 .3rem}
footer div{display:flex}
@media (max-width:900px){.panels{grid-template-columns:1fr}.panels>.panel:first-child{position:static}}
@media print{:root{--bg:#fff;--fg:#1f2328;--mu:#59636e;--bd:#d1d9e0;--box:#f6f8fa;--p:#0550ae;--v:#953800;
--t:#116329;--li:#8250df;--cm:#6e7781;--good:#1a7f37;--warn:#9a6700;--bad:#cf222e;--c0:#0969da;--c1:#bf3989;
--c2:#1a7f37;--c3:#bc4c00;--c4:#8250df;--c5:#6e7781;--c6:#0598bc;--c7:#cf222e;color-scheme:light}
details::details-content{content-visibility:visible;display:block}details.fold:not([open])>summary .l::after{content:""}
body{padding:0;font-size:11px}.code{max-height:none;overflow:visible;white-space:pre-wrap;
word-break:break-all}.panels{display:block}.panels>.panel:first-child{position:static}
.l.hl,.l.sel{background:none}section.page{break-before:page}section.page:first-of-type{break-before:auto}}
"""

JS = """
(()=>{const L=[...document.querySelectorAll('.l[data-src],.l[data-ops]')];
const lang=e=>e.closest('.code').dataset.lang,ops=e=>(e.dataset.ops||'').split(' ').filter(Boolean);
const page=e=>e.closest('section.page')||document;
function related(el){const p=page(el),ls=L.filter(e=>page(e)===p),k=lang(el),src=el.dataset.src||'';
let eq=ls.filter(e=>lang(e)==='jaxpr');
if(k==='jaxpr')eq=[el];else if(k==='python')eq=eq.filter(e=>e.dataset.src===src);
else{const o=new Set(ops(el));eq=eq.filter(e=>ops(e).some(x=>o.has(x))&&(!src||e.dataset.src===src))}
const srcs=new Set(eq.map(e=>e.dataset.src).filter(Boolean));if(src)srcs.add(src);
const o=new Set(eq.flatMap(ops));
return ls.filter(e=>{const q=lang(e);if(q==='python')return srcs.has(e.dataset.src);if(q==='jaxpr')return eq.includes(e);
return ops(e).some(x=>o.has(x))&&(!e.dataset.src||srcs.has(e.dataset.src))})}
document.addEventListener('click',ev=>{const el=ev.target.closest('.l[data-src],.l[data-ops]');
if(!el)return;
document.querySelectorAll('.l.hl,.l.sel').forEach(e=>e.classList.remove('hl','sel'));
const r=related(el);r.forEach(e=>e.classList.add('hl'));el.classList.add('sel');
const seen=new Set([el.closest('.code')]);for(const e of r){const c=e.closest('.code');if(seen.has(c))continue;
seen.add(c);for(let d=e.parentElement.closest('details');d;d=d.parentElement.closest('details'))d.open=true;
c.scrollTop+=e.getBoundingClientRect().top-c.getBoundingClientRect().top-c.clientHeight/3}});
let shut=[];addEventListener('beforeprint',()=>{shut=[...document.querySelectorAll('details:not([open])')];
shut.forEach(d=>d.open=true)});addEventListener('afterprint',()=>{shut.forEach(d=>d.open=false);shut=[]});})();
"""
