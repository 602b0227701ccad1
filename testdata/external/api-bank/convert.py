#!/usr/bin/env python3
"""Convert API-Bank (Li et al., EMNLP 2023) to toolshelf's catalog and labeled-query formats.

A retrieval set with two query kinds, keyword and request.

Usage:
    # the repository is large; only its api-bank/ folder is read
    git clone https://github.com/AlibabaResearch/DAMO-ConvAI $TMPDIR/damo-convai
    python3 convert.py --repo $TMPDIR/damo-convai     # writes catalog/ and queries.jsonl here
    python3 convert.py --repo DIR --out OTHER_DIR      # writes them elsewhere

--repo may be a clone or a bare git directory; every file is read with `git show <commit>:<path>`
(and listed with `git ls-tree`) at the pinned commit, so the work tree's state does not matter.
Standard library only; the API classes are parsed with `ast`, never imported. The output is
deterministic: tools sorted by name, queries in kind / level / file / position order.

The pinned commit is the last one that still holds api-bank/test-data/ (later commits moved the test
data to the Hugging Face hub); apis/, lv3_apis/, lv1-lv2-samples/ and LICENSE are the same there as
at the repository's head.

Catalog (two servers, because the two levels search different API pools upstream):
    api-bank      every API class in api-bank/apis/ (the pool of levels 1 and 2)
    api-bank-lv3  every API class in api-bank/lv3_apis/ (the pool of level 3)
ToolSearcher (the search tool itself) is left out of both. A tool's description is the class's
`description`; its inputSchema has one property per `input_parameters` entry, the declared Python
type mapped to JSON Schema (str, int, float, bool, list, list(str)); a parameter is required when
the class's `call` method takes it as a positional argument without a default.

Queries:
    keyword  the `keywords` argument of every ToolSearcher call in the level-2 dialogues
             (lv1-lv2-samples/level-2-toolsearcher/*.jsonl) and in test-data/level-3.json, labeled
             with the API the recorded ToolSearcher result returned. When the result is a list
             [GetUserToken, X] (upstream appends GetUserToken whenever the best match X takes a
             token), the label is X, the best match.
    request  the user's utterances that led to an API call, labeled with the APIs called
             (ToolSearcher excepted). Levels 1 and 2 (lv1-lv2-samples/*/*.jsonl): the user turns
             since the previous non-ToolSearcher API call are joined into one query, labeled with
             every API of the run of calls that follows them before the next user turn. Level 3
             (test-data/level-3.json): the one-sentence requirement, labeled with every API called.
A label points into the pool of its level; where the other pool has a tool of the same name
(AddMeeting, Calculator, QueryMeeting), that tool is listed too, since both satisfy the query.
Identical (query text, labels) pairs are kept once (whitespace collapsed; first occurrence kept).
"""
import argparse
import ast
import json
import os
import re
import subprocess
import sys
from collections import Counter

COMMIT = "1d76900822d9ecfcd6e9eb0ca64a073cb892b735"
BASE = "api-bank"
POOLS = [("api-bank", BASE + "/apis"), ("api-bank-lv3", BASE + "/lv3_apis")]
LEVEL_SERVER = {"level-1": "api-bank", "level-2": "api-bank", "level-3": "api-bank-lv3"}
DIALOGUES = [("level-1", BASE + "/lv1-lv2-samples/level-1-given-desc"),
             ("level-2", BASE + "/lv1-lv2-samples/level-2-toolsearcher")]
LEVEL3 = BASE + "/test-data/level-3.json"
LEFT_OUT = {"ToolSearcher"}
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
         "list": "array", "dict": "object", "json": "object"}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def show(repo, path):
    return git(repo, "show", f"{COMMIT}:{path}").decode("utf-8")


def ls(repo, folder):
    out = git(repo, "ls-tree", "-r", "-z", "--name-only", COMMIT, folder + "/").decode("utf-8")
    return sorted(p for p in out.split("\0") if p)


def prop(p):
    """One API-Bank parameter declaration -> a JSON Schema property."""
    t = str(p.get("type", "")).strip().lower()
    s = {}
    m = re.fullmatch(r"list\((\w+)\)", t)
    if m:
        s["type"] = "array"
        if m.group(1) in TYPES:
            s["items"] = {"type": TYPES[m.group(1)]}
    elif t in TYPES:
        s["type"] = TYPES[t]
    if p.get("description"):
        s["description"] = p["description"]
    return s


def api_classes(repo, folder):
    """Parse every API subclass in folder with ast: name, description, inputSchema."""
    tools = []
    for path in ls(repo, folder):
        if not path.endswith(".py"):
            continue
        for node in ast.parse(show(repo, path), filename=path).body:
            if not isinstance(node, ast.ClassDef):
                continue
            if not any(isinstance(b, ast.Name) and b.id == "API" for b in node.bases):
                continue
            attrs, call = {}, None
            for st in node.body:
                if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                    if st.targets[0].id in ("description", "input_parameters"):
                        attrs[st.targets[0].id] = ast.literal_eval(st.value)
                elif isinstance(st, ast.FunctionDef) and st.name == "call":
                    call = st
            params = attrs.get("input_parameters") or {}
            positional = []
            if call is not None:
                args = [a.arg for a in call.args.posonlyargs + call.args.args][1:]   # drop self
                positional = args[:len(args) - len(call.args.defaults)]
            tools.append({"name": node.name, "description": attrs.get("description", "").strip(),
                          "inputSchema": {"type": "object",
                                          "properties": {k: prop(v) for k, v in params.items()},
                                          "required": [k for k in params if k in positional]},
                          "_file": path})
    return tools


def norm(text):
    return " ".join(str(text).split())


def best_match(output):
    """The API a recorded ToolSearcher result names (its best match), or None."""
    if isinstance(output, dict):
        return output.get("name")
    if isinstance(output, list):
        names = [o.get("name") for o in output if isinstance(o, dict) and o.get("name")]
        rest = [n for n in names if n != "GetUserToken"]
        return (rest or names or [None])[-1]
    return None


def dialogue_events(repo, level, folder, drops):
    """Yield (kind, level, file, text, [api names]) from one folder of annotated dialogues."""
    for path in ls(repo, folder):
        if not path.endswith(".jsonl"):
            continue
        turns = [json.loads(line) for line in show(repo, path).splitlines() if line.strip()]
        if not turns:
            drops["empty dialogue file"] += 1
            continue
        fname = os.path.basename(path)
        pending, run_text, run = [], None, []     # user turns not yet answered; the current run
        for t in turns:
            role = t.get("role")
            if role == "User":
                if run:
                    yield ("request", level, fname, run_text, run)
                    run, run_text = [], None
                pending.append(norm(t.get("text", "")))
            elif role == "API":
                name = t.get("api_name")
                if name == "ToolSearcher":
                    kw = norm((t.get("param_dict") or {}).get("keywords", ""))
                    found = best_match((t.get("result") or {}).get("output"))
                    if kw and found:
                        yield ("keyword", level, fname, kw, [found])
                    else:
                        drops["ToolSearcher call without keywords or result"] += 1
                    continue
                if not run:
                    run_text = " ".join(p for p in pending if p)
                    pending = []
                if not run_text:
                    drops["API call with no user turn before it"] += 1
                    continue
                if name not in run:
                    run.append(name)
        if run:
            yield ("request", level, fname, run_text, run)


def level3_events(repo, drops):
    fname = os.path.basename(LEVEL3)
    for sample in json.loads(show(repo, LEVEL3)):
        called = []
        for a in sample.get("apis", []):
            if a.get("api_name") == "ToolSearcher":
                kw = norm((a.get("input") or {}).get("keywords", ""))
                found = best_match((a.get("output") or {}).get("output"))
                if kw and found:
                    yield ("keyword", "level-3", fname, kw, [found])
                else:
                    drops["ToolSearcher call without keywords or result"] += 1
            elif a.get("api_name") and a["api_name"] not in called:
                called.append(a["api_name"])
        text = norm(sample.get("requirement", ""))
        if text and called:
            yield ("request", "level-3", fname, text, called)
        else:
            drops["level-3 sample without requirement or API call"] += 1


def write_catalog(out, servers):
    cat_dir = os.path.join(out, "catalog")
    os.makedirs(cat_dir, exist_ok=True)
    for f in sorted(os.listdir(cat_dir)):
        if f.endswith(".json"):
            os.remove(os.path.join(cat_dir, f))
    for server, tools in servers.items():
        lines = [json.dumps({k: v for k, v in t.items() if not k.startswith("_")}, ensure_ascii=False)
                 for t in tools]
        head = json.dumps({"server": server, "description": ""}, ensure_ascii=False)[:-1]
        with open(os.path.join(cat_dir, server + ".json"), "w", encoding="utf-8") as fh:
            fh.write(head + ', "tools": [\n' + ",\n".join(lines) + "\n]}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--repo", required=True, help="clone or bare git directory of DAMO-ConvAI")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)),
                    help="where catalog/ and queries.jsonl go (default: beside this script)")
    a = ap.parse_args()

    servers, left_out = {}, []
    for server, folder in POOLS:
        tools = []
        for t in api_classes(a.repo, folder):
            if t["name"] in LEFT_OUT:
                left_out.append(f"{server}/{t['name']}")
                continue
            if not NAME_RE.match(t["name"]) or not t["description"]:
                sys.exit(f"unusable tool {t['name']!r} in {t['_file']}")
            tools.append(t)
        names = [t["name"] for t in tools]
        if len(set(names)) != len(names):
            sys.exit(f"duplicate tool names in {folder}")
        servers[server] = sorted(tools, key=lambda t: t["name"])
    known = {s: {t["name"] for t in ts} for s, ts in servers.items()}

    drops = Counter()
    events = []
    for level, folder in DIALOGUES:
        events.extend(dialogue_events(a.repo, level, folder, drops))
    events.extend(level3_events(a.repo, drops))

    seen, queries, counters = set(), [], Counter()
    for kind in ("keyword", "request"):
        for ev_kind, level, fname, text, names in events:
            if ev_kind != kind:
                continue
            home = LEVEL_SERVER[level]
            rel = []
            for n in names:
                if n not in known[home]:
                    drops[f"{kind}: label {n!r} not in the {home} pool"] += 1
                    continue
                for server in [home] + [s for s in servers if s != home]:
                    if n in known[server] and {"server": server, "tool": n} not in rel:
                        rel.append({"server": server, "tool": n})
            if not rel:
                drops[f"{kind}: query without a usable label"] += 1
                continue
            key = (text, tuple(sorted((r["server"], r["tool"]) for r in rel)))
            if key in seen:
                drops[f"{kind}: duplicate (query, labels) pair"] += 1
                continue
            seen.add(key)
            counters[kind] += 1
            queries.append({"id": f"api-bank-{kind}-{counters[kind]}", "query": text, "lang": "en",
                            "kind": kind, "relevant": rel, "category": level})

    write_catalog(a.out, servers)
    with open(os.path.join(a.out, "queries.jsonl"), "w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{sum(len(t) for t in servers.values())} tools in {len(servers)} servers "
          f"({', '.join(f'{s} {len(t)}' for s, t in servers.items())}); left out: {', '.join(left_out)}")
    print(f"{len(queries)} queries: " + ", ".join(f"{k} {v}" for k, v in sorted(counters.items())))
    for k, v in sorted(drops.items()):
        print(f"  dropped {v}: {k}")


if __name__ == "__main__":
    main()
