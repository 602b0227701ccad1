#!/usr/bin/env python3
"""Convert Gorilla's APIBench (Patil et al., 2023) to toolshelf's catalog and labeled-query formats,
as a retrieval set: every API of the three API pools (Hugging Face, TensorFlow Hub, Torch Hub) is a
tool on one shelf, each evaluation question is a query labeled with the API its reference answer
calls.

Usage:
    git clone https://github.com/ShishirPatil/gorilla $TMPDIR/gorilla
    python3 convert.py --repo $TMPDIR/gorilla        # writes catalog/ and queries.jsonl here

--repo may be a clone or a bare git directory; files are read with `git show <commit>:<path>` at the
pinned commit (COMMIT below). --out chooses another output folder. Standard library only; the
output is deterministic (same bytes on every run).

Files read: data/api/{huggingface,tensorflowhub,torchhub}_api.jsonl (the API pools) and
data/apibench/{huggingface,tensorflow,torchhub}_eval.json (the evaluation questions, one JSON object
a line). The training splits are not read.

What an API (a tool) is, per pool (the pools list one row per generated question, so one API is
often listed many times):
  huggingface    one tool per distinct api_name (the model id); rows with one api_name are merged.
  tensorflowhub  one tool per distinct model handle, the tfhub.dev URL in api_call (hub.load,
                 hub.KerasLayer and Sequential wrappers of one URL are one tool); a call without a
                 URL is its own tool, keyed by the call.
  torchhub       one tool per distinct api_call (each names a repo_or_dir and a model).
A merged tool takes the most frequent domain and the most frequent description of its rows (ties:
the earliest row), and the api_arguments of the first row with that description. Its server is
"<pool>-<slug of domain>". Tool names: huggingface the api_name, tensorflowhub the handle,
torchhub repo_or_dir + model, each with characters outside [A-Za-z0-9_-] turned into "_" and cut to
64; clashes in a server get "_2", "_3" suffixes in pool order.

Queries: the text of the first "###Instruction:" block up to the next "###Input/Output/..." tag or
"<<<" marker, whitespace collapsed. The label is the tool of the question's api_data (huggingface:
api_name; tensorflowhub: the handle of api_call; torchhub: api_call). Questions with an empty text
or an API not in the pool are dropped (and counted on stdout).
"""
import argparse, ast, json, os, re, statistics, subprocess
from collections import Counter, OrderedDict

COMMIT = "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8"
POOLS = [  # pool name, API file, eval file, framework label for the server description
    ("huggingface", "data/api/huggingface_api.jsonl", "data/apibench/huggingface_eval.json", "Hugging Face"),
    ("tensorflowhub", "data/api/tensorflowhub_api.jsonl", "data/apibench/tensorflow_eval.json", "TensorFlow Hub"),
    ("torchhub", "data/api/torchhub_api.jsonl", "data/apibench/torchhub_eval.json", "PyTorch Hub"),
]
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
EMPTY = (None, "", "N/A", "n/a", "None")


def show(repo, path):
    return subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True).stdout.decode("utf-8")


def jsonl(text):
    return [json.loads(l) for l in text.splitlines() if l.strip()]


def slug(s, n=64):
    return re.sub(r"[^A-Za-z0-9_-]+", "_", s).strip("_")[:n] or "api"


def server_slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") or "misc"


def handle(call):
    """The tfhub.dev model handle in a TensorFlow Hub call, else the call with quotes unified."""
    m = re.search(r"https?://tfhub\.dev/([^'\"\s)]+)", call)
    if m:
        return m.group(1).rstrip("/")
    return re.sub(r"\s+", " ", call.replace('"', "'")).strip()


def torch_name(call):
    repo = re.search(r"repo_or_dir\s*=\s*['\"]([^'\"]+)['\"]", call)
    model = re.search(r"model\s*=\s*['\"]([^'\"]+)['\"]", call)
    parts = [m.group(1) for m in (repo, model) if m]
    return "_".join(parts) if parts else call


def api_key(pool, d):
    if pool == "huggingface":
        return d["api_name"]
    if pool == "tensorflowhub":
        return handle(d["api_call"])
    return d["api_call"]


def tool_base(pool, key):
    if pool == "torchhub":
        return slug(torch_name(key))
    return slug(key)


def example(v):
    if v in EMPTY or v == [] or v == {}:
        return None
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 200 else None


def prop_name(k):
    k = str(k).strip()
    if IDENT.match(k):
        return k
    k = re.sub(r"[^A-Za-z0-9_.-]+", "_", k).strip("_")[:64]
    return k if IDENT.match(k) else None


def params(a, props):
    """APIBench api_arguments (dict, list of names or of {name, description}, text) -> props."""
    if isinstance(a, dict):
        for k, v in a.items():
            name = prop_name(k)
            if name and name not in props:
                p = {"type": "string"}
                ex = example(v)
                if ex is not None:
                    p["examples"] = [ex]
                props[name] = p
    elif isinstance(a, list):
        for v in a:
            if isinstance(v, dict) and "name" in v:
                name = prop_name(v["name"])
                if name and name not in props:
                    p = {"type": "string"}
                    if isinstance(v.get("description"), str) and v["description"].strip():
                        p["description"] = v["description"].strip()
                    if v.get("default") not in EMPTY:
                        p["default"] = str(v["default"])
                    props[name] = p
            elif isinstance(v, dict):   # {"model_id": "URL or path to the model"}
                for k, d in v.items():
                    name = prop_name(k)
                    if name and name not in props:
                        props[name] = {"type": "string"}
                        if isinstance(d, str) and d.strip():
                            props[name]["description"] = d.strip()
            elif isinstance(v, str):
                words(v, props)
    elif isinstance(a, str) and a.strip() not in EMPTY:
        s = a.strip()
        if s[:1] in "{[":
            try:
                v = ast.literal_eval(s)
            except (ValueError, SyntaxError):
                v = None
            if isinstance(v, (dict, list)):
                return params(v, props)
        for part in s.split(","):
            words(part, props)
    return props


def words(s, props):
    """A free-text argument entry: kept when it is a bare name or name=value."""
    m = re.match(r"^\**([A-Za-z_][A-Za-z0-9_.]{0,63})\s*(?:=\s*(.+))?$", s.strip())
    if m and m.group(1) not in props:
        p = {"type": "string"}
        if m.group(2) and m.group(2).strip() not in EMPTY:
            p["examples"] = [m.group(2).strip().strip("'\"")]
        props[m.group(1)] = p


def majority(values):
    c = Counter(values)
    best = max(c.values())
    return next(v for v in values if c[v] == best)


def request(code):
    """The user's request of an APIBench question: the first instruction, without input/output."""
    m = re.search(r"###\s*Instruction\s*:?", code)
    s = code[m.end():] if m else code
    s = re.split(r"###\s*[A-Za-z]+|<<<", s, maxsplit=1)[0]
    return re.sub(r"\s+", " ", s).strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", required=True, help="clone or bare git directory of ShishirPatil/gorilla")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    servers = OrderedDict()       # server -> {"description": ..., "tools": OrderedDict(name -> def)}
    queries, dropped = [], Counter()
    for pool, api_file, eval_file, label in POOLS:
        rows = OrderedDict()      # key -> [pool rows]
        for r in jsonl(show(a.repo, api_file)):
            rows.setdefault(api_key(pool, r), []).append(r)
        where = {}                # key -> (server, tool)
        for key, rs in rows.items():
            domain = majority([r.get("domain") or "misc" for r in rs])
            descs = [(r.get("description") or r.get("functionality") or "").strip() for r in rs]
            desc = majority(descs)
            rep = rs[descs.index(desc)]
            server = f"{pool}-{server_slug(domain)}"
            srv = servers.setdefault(server, {"description": f"{label} models: {domain.strip()}",
                                              "tools": OrderedDict()})
            base = tool_base(pool, key)
            name, n = base, 1
            while name in srv["tools"]:
                n += 1
                name = f"{base[:64 - len(str(n)) - 1]}_{n}"
            srv["tools"][name] = {"name": name, "description": desc,
                                  "inputSchema": {"type": "object",
                                                  "properties": params(rep.get("api_arguments"), OrderedDict())}}
            where[key] = (server, name)
        for i, q in enumerate(jsonl(show(a.repo, eval_file)), 1):
            text = request(q.get("code", ""))
            d = q.get("api_data") or {}
            key = api_key(pool, d) if d.get("api_name") is not None and d.get("api_call") else None
            if not text:
                dropped[pool, "empty request"] += 1
            elif key not in where:
                dropped[pool, "API not in the pool"] += 1
            else:
                s, t = where[key]
                queries.append({"id": f"apibench-{pool}-{i}", "query": text, "lang": "en", "kind": "request",
                                "relevant": [{"server": s, "tool": t}], "category": pool})
    cat_dir = os.path.join(a.out, "catalog")
    os.makedirs(cat_dir, exist_ok=True)
    for f in sorted(os.listdir(cat_dir)):
        if f.endswith(".json"):
            os.remove(os.path.join(cat_dir, f))
    for server in sorted(servers):
        srv = servers[server]
        head = json.dumps({"server": server, "description": srv["description"]}, ensure_ascii=False)[:-1]
        lines = [json.dumps(t, ensure_ascii=False) for t in srv["tools"].values()]
        with open(os.path.join(cat_dir, server + ".json"), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(head + ', "tools": [\n' + ",\n".join(lines) + "\n]}\n")
    with open(os.path.join(a.out, "queries.jsonl"), "w", encoding="utf-8", newline="\n") as fh:
        for q in queries:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    ntools = sum(len(s["tools"]) for s in servers.values())
    print(f"{ntools} tools in {len(servers)} servers, {len(queries)} queries")
    for pool, *_ in POOLS:
        qs = [q for q in queries if q["category"] == pool]
        srv = [s for s in servers if s.startswith(pool + "-")]
        labeled = {(q["relevant"][0]["server"], q["relevant"][0]["tool"]) for q in qs}
        print(f"  {pool}: {sum(len(servers[s]['tools']) for s in srv)} tools in {len(srv)} servers, "
              f"{len(qs)} queries, {len(labeled)} distinct labeled tools")
    if queries:
        lens = [len(q["query"].split()) for q in queries]
        print(f"  query words: median {statistics.median(lens)}, min {min(lens)}, max {max(lens)}")
    for (pool, why), n in sorted(dropped.items()):
        print(f"  dropped {n} {pool} questions: {why}")


if __name__ == "__main__":
    main()
