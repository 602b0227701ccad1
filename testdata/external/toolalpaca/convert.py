#!/usr/bin/env python3
"""Convert ToolAlpaca (Tang et al., arXiv:2306.05301) to toolshelf's catalog and labeled-query
formats, as a retrieval set: every function of every API pooled into one shelf (one server per API),
each instruction searched over the whole pool, labeled with the functions its golden answer calls.

Usage:
    git clone https://github.com/tangqiaoyu/ToolAlpaca $TMPDIR/ToolAlpaca
    python3 convert.py --repo $TMPDIR/ToolAlpaca      # writes catalog/ and queries.jsonl here

--repo may be a clone or a bare git directory; files are read with `git show <commit>:<path>` at the
pinned commit. Standard library only; the output is deterministic. --out DIR writes elsewhere.

Files: data/eval_simulated.json (10 simulated APIs) and data/eval_real.json (11 real APIs). Each API's
OpenAPI spec ("Documentation") gives its functions, named as upstream names them (operationId, else
path and method, tool_maker/natural_language_documentation.py), with the operation's summary and
description, and an inputSchema made of the operation's (and its path's) parameters and the
properties of its JSON request body, $refs resolved. An instruction's labels are the distinct
"Action"s of its Golden_Answers, without the agent's "getDetails" (ask the user) pseudo-tool and with
an "[Optional]" prefix removed; an instruction that calls a function missing from its API's spec is
dropped.

--with-train also pools the APIs of data/train_data.json and adds training instances (labels: the
API functions among the actions of their intermediate_steps) with the smallest
sha256("<API name>/<instance index>") until there are --total queries (default 1500). The shipped
files are built WITHOUT it: the snapshot this set was converted from lacks train_data.json (a file
over 4 MiB), so that path has only been run on a synthetic file.
"""
import argparse, hashlib, json, os, re, subprocess, sys, unicodedata
from collections import OrderedDict

COMMIT = "189069998d64a7baf1b4a1c3c4b2e75eb9d05532"
EVAL_FILES = ["eval_simulated", "eval_real"]
TRAIN_FILE = "train_data"
METHODS = ["get", "post", "put", "delete", "patch", "head", "options", "trace"]
JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}
META_ACTIONS = {"getDetails"}  # ToolAlpaca's agent tool that asks the user for missing details
# OpenAPI schema keywords that are JSON Schema 2020-12 keywords with the same meaning.
SCALAR_KEYS = ["title", "description", "format", "enum", "default", "const", "minimum", "maximum",
               "multipleOf", "minLength", "maxLength", "pattern", "minItems", "maxItems",
               "uniqueItems", "minProperties", "maxProperties"]


def show(repo, path):
    return subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True).stdout.decode("utf-8")


def slug(name):
    s = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") or "api"


def tool_name(name):
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")[:64] or "fn"


def resolve(doc, ref):
    """A local JSON pointer ("#/components/schemas/X") into the OpenAPI document, or None."""
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return None
    node = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def schema(s, doc, seen=()):
    """OpenAPI 3.0 schema object -> JSON Schema 2020-12 (recursively, $refs inlined)."""
    if isinstance(s, bool):
        return s
    if not isinstance(s, dict):
        return {}
    if "$ref" in s:
        ref = s["$ref"]
        target = resolve(doc, ref)
        if target is None or ref in seen:
            return {}
        return schema(target, doc, seen + (ref,))
    out = {}
    t = s.get("type")
    if isinstance(t, str) and t in JSON_TYPES:
        out["type"] = t
    elif isinstance(t, list) and [x for x in t if x in JSON_TYPES]:
        out["type"] = [x for x in t if x in JSON_TYPES]
    for k in SCALAR_KEYS:
        if k in s and s[k] is not None and s[k] != "":
            out[k] = s[k]
    if "enum" in out and not (isinstance(out["enum"], list) and out["enum"]):
        del out["enum"]
    if "example" in s and s["example"] is not None:
        out["examples"] = [s["example"]]
    for k in ("exclusiveMinimum", "exclusiveMaximum"):  # booleans in OpenAPI 3.0, numbers in 2020-12
        v = s.get(k)
        bound = "minimum" if k == "exclusiveMinimum" else "maximum"
        if v is True and bound in out:
            out[k] = out.pop(bound)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = v
    for k in ("allOf", "anyOf", "oneOf"):
        if isinstance(s.get(k), list) and s[k]:
            out[k] = [schema(x, doc, seen) for x in s[k]]
    if isinstance(s.get("properties"), dict):
        out["properties"] = {k: schema(v, doc, seen) for k, v in s["properties"].items()}
        out.setdefault("type", "object")
    if isinstance(s.get("items"), (dict, bool)):
        out["items"] = schema(s["items"], doc, seen)
    if isinstance(s.get("additionalProperties"), (dict, bool)):
        out["additionalProperties"] = schema(s["additionalProperties"], doc, seen)
    if out.get("type") == "object":
        out.setdefault("properties", {})
        req = s.get("required")
        if isinstance(req, list):
            req = list(OrderedDict.fromkeys(r for r in req if r in out["properties"]))
            if req:
                out["required"] = req
    return out


def functions(doc):
    """name -> (path, method), as ToolAlpaca names an OpenAPI spec's operations (a later duplicate
    name replaces an earlier one, as upstream)."""
    funcs = OrderedDict()
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        for method, op in item.items():
            if method not in METHODS or not isinstance(op, dict):
                continue
            code = path[1:].replace("/", "_").replace("{", "").replace("}", "") + "_" + method
            funcs[op.get("operationId", code)] = (path, method)
    return funcs


def sentence(text):
    return text.strip().rstrip(".").strip().lower()


def describe(op):
    """The operation's summary and description, both when neither repeats the other."""
    parts = []
    for k in ("summary", "description"):
        v = op.get(k)
        if isinstance(v, str) and v.strip():
            v = " ".join(v.split())
            if not any(sentence(v) in sentence(p) or sentence(p) in sentence(v) for p in parts):
                parts.append(v)
            elif parts and sentence(parts[-1]) in sentence(v):
                parts[-1] = v
    if len(parts) == 2 and not parts[0].endswith((".", "!", "?")):
        parts[0] += "."
    return " ".join(parts)


def input_schema(doc, path, method):
    item = doc["paths"][path]
    op = item[method]
    props, required = OrderedDict(), []
    params = list(op.get("parameters") or []) + list(item.get("parameters") or [])
    for p in params:
        if isinstance(p, dict) and "$ref" in p:
            p = resolve(doc, p["$ref"])
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or p["name"] in props:
            continue
        prop = schema(p.get("schema") or {}, doc)
        desc = p.get("description")
        if isinstance(desc, str) and desc.strip():  # the parameter's description, after its type
            head = {"type": prop["type"]} if "type" in prop else {}
            head["description"] = desc.strip()
            prop = dict(head, **{k: v for k, v in prop.items() if k not in ("type", "description")})
        props[p["name"]] = prop
        if p.get("required") is True:
            required.append(p["name"])
    body = op.get("requestBody")
    if isinstance(body, dict) and "$ref" in body:
        body = resolve(doc, body["$ref"])
    content = body.get("content") if isinstance(body, dict) else None
    if isinstance(content, dict) and content:
        media = content.get("application/json") or next(iter(content.values()))
        bs = schema(media.get("schema") or {}, doc) if isinstance(media, dict) else {}
        for k, v in bs.get("properties", {}).items():
            if k not in props:
                props[k] = v
            elif "description" not in props[k] and isinstance(v, dict) and "description" in v:
                props[k]["description"] = v["description"]
        required += bs.get("required", [])
    return {"type": "object", "properties": dict(props),
            "required": list(OrderedDict.fromkeys(r for r in required if r in props))}


class Shelf:
    def __init__(self):
        self.servers = OrderedDict()  # server -> {"description", "tools": OrderedDict(name -> tool)}
        self.apis = {}                # (file, API index) -> (server, {function name -> tool name})
        self.skipped = []

    def add(self, key, api):
        try:
            doc = json.loads(api["Documentation"]) if isinstance(api["Documentation"], str) else api["Documentation"]
            funcs = functions(doc)
        except (KeyError, TypeError, ValueError):
            self.skipped.append(api.get("Name"))
            return
        if not funcs:
            self.skipped.append(api.get("Name"))
            return
        proj = api.get("Function_Projection")
        if isinstance(proj, dict) and set(proj) != set(funcs):
            print(f"warning: {api['Name']}: Function_Projection differs from the spec's operations", file=sys.stderr)
        base = server = slug(api["Name"])
        n = 1
        while server in self.servers:
            n += 1
            server = f"{base}-{n}"
        tools, names = OrderedDict(), {}
        for fname, (path, method) in funcs.items():
            name, b, i = tool_name(fname), tool_name(fname), 1
            while name in tools:
                i += 1
                name = f"{b[:60]}_{i}"
            tools[name] = {"name": name, "description": describe(doc["paths"][path][method]),
                           "inputSchema": input_schema(doc, path, method)}
            names[fname] = name
        self.servers[server] = {"description": (api.get("Description") or "").strip(), "tools": tools}
        self.apis[key] = (server, names)


def labels(actions, server, names):
    """Labels for a list of actions, or None when one names no function of the API."""
    rel = []
    for a in actions:
        if not isinstance(a, str):
            return None
        a = a.strip()
        if a.startswith("[Optional]"):
            a = a[len("[Optional]"):].strip()
        if a in META_ACTIONS:
            continue
        if a not in names:
            return None
        lab = {"server": server, "tool": names[a]}
        if lab not in rel:
            rel.append(lab)
    return rel or None


def clean(text):
    text = " ".join(text.split())
    if len(text) > 1 and text[0] == text[-1] == '"' and text.count('"') == 2:
        text = text[1:-1].strip()
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--with-train", action="store_true", help="pool train_data.json too (see above)")
    ap.add_argument("--total", type=int, default=1500)
    a = ap.parse_args()
    files = list(EVAL_FILES) + ([TRAIN_FILE] if a.with_train else [])
    data = {f: json.loads(show(a.repo, f"data/{f}.json")) for f in files}
    shelf = Shelf()
    for f in files:
        for i, api in enumerate(data[f]):
            shelf.add((f, i), api)
    queries, dropped = [], {}
    for f in EVAL_FILES:
        n = -1
        for i, api in enumerate(data[f]):
            gold = api.get("Golden_Answers") or []
            for j, text in enumerate(api.get("Instructions") or []):
                n += 1
                rel = None
                if (f, i) in shelf.apis and j < len(gold) and isinstance(gold[j], list):
                    rel = labels([s.get("Action") for s in gold[j] if isinstance(s, dict)], *shelf.apis[(f, i)])
                if not rel or not isinstance(text, str) or not clean(text):
                    dropped[f] = dropped.get(f, 0) + 1
                    continue
                queries.append({"id": f"toolalpaca-{f}-{n}", "query": clean(text), "lang": "en",
                                "kind": "request", "relevant": rel, "category": f})
    if a.with_train:
        cands = []
        for i, api in enumerate(data[TRAIN_FILE]):
            if (TRAIN_FILE, i) not in shelf.apis:
                continue
            server, names = shelf.apis[(TRAIN_FILE, i)]
            for j, inst in enumerate(api.get("Instances") or []):
                if not isinstance(inst, dict) or not isinstance(inst.get("input"), str):
                    continue
                acts = [st[0][0] for st in inst.get("intermediate_steps") or []
                        if isinstance(st, list) and st and isinstance(st[0], list) and st[0]]
                rel = labels([x for x in acts if isinstance(x, str) and x.strip() in names], server, names)
                if rel and clean(inst["input"]):
                    key = hashlib.sha256(f"{api.get('Name')}/{j}".encode("utf-8")).hexdigest()
                    cands.append((key, i, j, clean(inst["input"]), rel))
        for key, i, j, text, rel in sorted(cands)[:max(0, a.total - len(queries))]:
            queries.append({"id": f"toolalpaca-train-{i}-{j}", "query": text, "lang": "en",
                            "kind": "request", "relevant": rel, "category": "train"})
    cat_dir = os.path.join(a.out, "catalog")
    os.makedirs(cat_dir, exist_ok=True)
    for f in sorted(os.listdir(cat_dir)):
        if f.endswith(".json"):
            os.remove(os.path.join(cat_dir, f))
    for server, s in shelf.servers.items():
        lines = [json.dumps(t, ensure_ascii=False) for t in s["tools"].values()]
        head = json.dumps({"server": server, "description": s["description"]}, ensure_ascii=False)[:-1]
        with open(os.path.join(cat_dir, server + ".json"), "w", encoding="utf-8") as fh:
            fh.write(head + ', "tools": [\n' + ",\n".join(lines) + "\n]}\n")
    with open(os.path.join(a.out, "queries.jsonl"), "w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    tools = sum(len(s["tools"]) for s in shelf.servers.values())
    print(f"{tools} tools in {len(shelf.servers)} servers, {len(queries)} queries; dropped "
          + (", ".join(f"{k} {v}" for k, v in dropped.items()) or "none")
          + (f"; APIs without a usable spec: {len(shelf.skipped)}" if shelf.skipped else ""))


if __name__ == "__main__":
    main()
