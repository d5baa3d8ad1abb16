// The merge forest page: search a token (form or URL #q=token / #id=123), draw the tree of merges
// that builds it from bytes, list the tokens it helps build, browse the vocabulary by length and id.
"use strict";
const D = JSON.parse(document.getElementById("forest-data").textContent);
const N = D.tok.length;
const PAGE = 300;
const byText = new Map();
D.tok.forEach((t, i) => { if (t !== null && !byText.has(t)) byText.set(t, i); });
const children = new Map();  // id -> ids of tokens whose merge used it
for (let i = 0; i < N; i++) {
  for (const p of [D.l[i], D.r[i]]) {
    if (p >= 0) { if (!children.has(p)) children.set(p, []); children.get(p).push(i); }
  }
}
const pairs = new Map();  // left * N + right -> the id that merge made
for (let i = 0; i < N; i++) if (D.l[i] >= 0) pairs.set(D.l[i] * N + D.r[i], i);
const $ = (id) => document.getElementById(id);

function spell(q) {  // BPE on the query's UTF-8 bytes with the merges (no pre-tokenizer): lowest merge first
  const ids = Array.from(new TextEncoder().encode(q), (b) => D.byte[b]);
  if (ids.includes(-1)) return [];  // a byte the vocabulary lacks
  for (;;) {
    let best = -1, at = -1;
    for (let k = 0; k + 1 < ids.length; k++) {
      const made = pairs.get(ids[k] * N + ids[k + 1]);
      if (made !== undefined && (best < 0 || D.m[made] < D.m[best])) { best = made; at = k; }
    }
    if (best < 0) return ids;
    ids.splice(at, 2, best);
  }
}

function visible(t) {  // whitespace made visible
  return t.replace(/ /g, "\u2423").replace(/\n/g, "\u21b5").replace(/\t/g, "\u21e5").replace(/\r/g, "\u240d");
}
function nbytes(i) { return D.n[i]; }  // byte length of a token
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function chip(i) {
  const c = el("span", "chip", visible(D.tok[i]));
  c.appendChild(el("small", "", String(i)));
  c.dataset.id = i;
  c.title = "id " + i + (D.m[i] >= 0 ? ", merge #" + D.m[i] : ", a byte");
  c.onclick = () => { location.hash = "id=" + i; };
  return c;
}
function countText(i) {
  if (D.c === null) return "count unknown";
  return D.c[i] >= 0 ? "count " + D.c[i].toLocaleString("en") : "count unknown";
}
function node(i, isRoot) {
  const li = el("li");
  const leaf = D.l[i] < 0;
  const box = el("span", "box" + (leaf ? " byte" : "") + (isRoot ? " root" : ""));
  box.dataset.id = i;
  box.appendChild(el("span", "t", visible(D.tok[i])));
  const meta = leaf ? "byte · id " + i : "id " + i + " \u00b7 merge #" + D.m[i] + " \u00b7 " + countText(i);
  box.appendChild(el("span", "meta", meta));
  box.title = meta;
  box.onclick = (ev) => { ev.stopPropagation(); location.hash = "id=" + i; };
  li.appendChild(box);
  if (!leaf) {
    const ul = el("ul");
    ul.appendChild(node(D.l[i], false));
    ul.appendChild(node(D.r[i], false));
    li.appendChild(ul);
  }
  return li;
}
function showTree(i) {
  const tree = $("tree");
  tree.textContent = "";
  const ul = el("ul");
  ul.appendChild(node(i, true));
  tree.appendChild(ul);
  tree.dataset.root = i;
  const info = $("info");
  info.textContent = "";
  const used = children.get(i) || [];
  const p = el("p", "", used.length ? "used by " + used.length + " merge(s):" : "used by no merge");
  info.appendChild(p);
  const box = el("div", "chips");
  used.slice(0, 60).forEach((j) => box.appendChild(chip(j)));
  info.appendChild(box);
  document.title = "Merge forest: " + visible(D.tok[i]);
}
function search(q) {
  $("q").value = q;
  const results = $("results");
  results.textContent = "";
  let exact = -1;
  const m = /^id:\s*(\d+)$/.exec(q);
  if (m && +m[1] < N && D.tok[+m[1]] !== null) exact = +m[1];
  else if (byText.has(q)) exact = byText.get(q);
  const found = [];
  if (q) {
    for (let i = 0; i < N && found.length < 100; i++) {
      if (i !== exact && D.tok[i] !== null && D.tok[i].includes(q)) found.push(i);
    }
  }
  if (exact >= 0) {
    $("status").textContent = "found id " + exact;
    showTree(exact);
  } else {
    $("status").textContent = q ? "no token is exactly \u201c" + q + "\u201d" : "";
    $("tree").textContent = "";
    delete $("tree").dataset.root;
  }
  const ids = exact < 0 && q && !m ? spell(q) : [];
  if (ids.length) {
    results.appendChild(el("p", "muted", "spelled with " + ids.length + " token(s) (merges applied to the whole text, no pre-tokenizer):"));
    const box = el("div", "chips");
    box.id = "spelled";
    ids.forEach((i) => box.appendChild(chip(i)));
    results.appendChild(box);
  }
  if (found.length) {
    results.appendChild(el("p", "muted", "tokens containing it" + (found.length === 100 ? " (first 100)" : "") + ":"));
    const box = el("div", "chips");
    found.forEach((i) => box.appendChild(chip(i)));
    results.appendChild(box);
  }
}
function browse(ids) {
  const b = $("browse");
  b.textContent = "";
  ids.forEach((i) => b.appendChild(chip(i)));
}
function browseLength(len) {
  const ids = [];
  for (let i = 0; i < N && ids.length < PAGE; i++) if (D.tok[i] !== null && nbytes(i) === len) ids.push(i);
  browse(ids);
}
function browseFrom(start) {
  const ids = [];
  for (let i = Math.max(0, start); i < N && ids.length < PAGE; i++) if (D.tok[i] !== null) ids.push(i);
  browse(ids);
}
function fromHash() {
  const h = location.hash.slice(1);
  const params = new URLSearchParams(h);
  if (params.has("id")) search("id:" + params.get("id"));
  else if (params.has("q")) search(params.get("q"));
}
function setup() {
  const lengths = new Map();
  for (let i = 0; i < N; i++) if (D.tok[i] !== null) { const n = nbytes(i); lengths.set(n, (lengths.get(n) || 0) + 1); }
  const sel = $("len");
  [...lengths.keys()].sort((a, b) => a - b).forEach((n) => {
    const o = el("option", "", n + " byte" + (n > 1 ? "s" : "") + " (" + lengths.get(n) + ")");
    o.value = n;
    sel.appendChild(o);
  });
  sel.onchange = () => browseLength(+sel.value);
  $("from").onchange = () => browseFrom(+$("from").value);
  $("prev").onclick = () => { $("from").value = Math.max(0, +$("from").value - PAGE); browseFrom(+$("from").value); };
  $("next").onclick = () => { $("from").value = +$("from").value + PAGE; browseFrom(+$("from").value); };
  $("search").onsubmit = (ev) => { ev.preventDefault(); location.hash = "q=" + encodeURIComponent($("q").value); };
  const specials = Object.entries(D.specials);
  if (specials.length) {
    const p = el("p", "muted", "special tokens (not merged): " + specials.map(([s, i]) => s + " = " + i).join(", "));
    document.body.appendChild(p);
  }
  window.addEventListener("hashchange", fromHash);
  browseFrom(256);
  fromHash();
}
setup();
