#!/usr/bin/env python3
"""Convert RestBench (RestGPT, Song et al. 2023, arXiv:2306.06624) to toolshelf's catalog and
labeled-query formats, as a retrieval set: every REST endpoint (method + path) of the TMDB and
Spotify OpenAPI specs is a tool, and each RestBench instruction is a query labeled with the
distinct endpoints of its human-annotated gold solution path.

Usage:
    # a clone or the bare git directory of https://github.com/Yifan-Song793/RestGPT
    python3 convert.py --repo /path/to/RestGPT            # writes catalog/ and queries.jsonl here
    python3 convert.py --repo /path/to/RestGPT --out DIR  # ... or under DIR

Files are read with `git -C REPO show <COMMIT>:<path>` at the pinned commit, so the working tree
(if any) does not matter. Standard library only; the output is deterministic (same bytes each run).

Inputs: specs/tmdb_oas.json, specs/spotify_oas.json (OpenAPI 3), datasets/tmdb.json,
datasets/spotify.json (lists of {"query", "solution": ["GET /path", ...]}).

Outputs:
    catalog/tmdb.json, catalog/spotify.json   one server per spec, one tool per operation
    queries.jsonl                             one labeled query per line

Conversion rules (see README.md for the reasoning):
  * Tool name: the operation's operationId, characters outside [A-Za-z0-9_-] replaced by "_",
    cut to 64; without an operationId, "<method>_<path>" slugged the same way. A repeated name
    gets "_2", "_3"... (in spec order). Both specs have unique operationIds, so none is renamed.
  * Description: the operation's summary and description, stripped; the summary is left out when
    the description already starts with it, and ends with "." when it has no closing punctuation.
  * inputSchema: {"type": "object", "properties", "required"} from the path-level and
    operation-level parameters (operation wins on the same name and location) that are in "path"
    or "query" (header and cookie parameters are left out), then the top-level properties of an
    application/json request body (a body property whose name a parameter already took is left
    out). A property keeps type (OpenAPI types; nullable and format are dropped), description
    (the parameter's, else its schema's, else its schema's title), enum, default and, for arrays,
    items (one level: the item's type, description and enum, and for object items the names and
    types of their properties). A $ref is resolved when it points into the same spec; a $ref met
    below the first level of a property is dropped. Path parameters are always required; other
    parameters when "required" is true (or the string "true", as the Spotify spec writes it);
    body properties when listed in the body's "required" and present in "properties".
  * Labels: each solution step "METHOD /path" is stripped and matched to an operation by method
    and path template, with path parameter names ignored ("/person/{movie_id}/movie_credits"
    matches "/person/{person_id}/movie_credits"). Repeated steps count once, in first-seen order.
    A query with a step that matches no operation is dropped (reported on stderr).
  * Query id: restbench-<tmdb|spotify>-<n>, n the 1-based position in the upstream dataset file
    (the numbering RestGPT's run_tmdb.py prints); ids of dropped queries are not reused.
"""
import argparse
import json
import os
import re
import subprocess
import sys

COMMIT = "d99012860cb45323975bf5780152d7aa44f390f5"
SETS = [  # server, spec, dataset
    ("tmdb", "specs/tmdb_oas.json", "datasets/tmdb.json"),
    ("spotify", "specs/spotify_oas.json", "datasets/spotify.json"),
]
METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
TYPES = {"string", "integer", "number", "boolean", "array", "object"}
NAME_BAD = re.compile(r"[^A-Za-z0-9_-]")


def show(repo, path):
    out = subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{path}"], check=True,
                         capture_output=True).stdout
    return out.decode("utf-8")


def deref(spec, node):
    """Follow a local "$ref" (possibly a chain of them); None if it cannot be resolved."""
    seen = set()
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
            return None
        seen.add(ref)
        cur = spec
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(cur, dict) or part not in cur:
                return None
            cur = cur[part]
        node = cur
    return node if isinstance(node, dict) else None


def truthy(v):
    return v is True or (isinstance(v, str) and v.strip().lower() == "true")


def text(v):
    return v.strip() if isinstance(v, str) else ""


def prop_schema(spec, sch, desc="", deep=True):
    """An OpenAPI schema -> a small JSON Schema. deep: whether items/properties are followed."""
    sch = deref(spec, sch) or {}
    out = {}
    t = sch.get("type")
    if isinstance(t, str) and t in TYPES:
        out["type"] = t
    elif "properties" in sch:
        out["type"] = "object"
    elif "items" in sch:
        out["type"] = "array"
    d = desc or text(sch.get("description")) or text(sch.get("title"))
    if d:
        out["description"] = d
    if isinstance(sch.get("enum"), list) and sch["enum"]:
        out["enum"] = sch["enum"]
    if "default" in sch and sch["default"] is not None:
        out["default"] = sch["default"]
    if not deep:
        return out
    it = deref(spec, sch.get("items"))
    if out.get("type") == "array" and it:
        item = prop_schema(spec, it, deep=False)
        if item.get("type") == "object" and isinstance(it.get("properties"), dict):
            item["properties"] = {
                k: {"type": v["type"]} if isinstance(v, dict) and v.get("type") in TYPES else {}
                for k, v in it["properties"].items()}
        out["items"] = item
    return out


def input_schema(spec, path_item, op):
    params = {}  # (in, name) -> parameter; operation-level ones override path-level ones
    for src in (path_item.get("parameters"), op.get("parameters")):
        for p in src or []:
            p = deref(spec, p)
            if p and isinstance(p.get("name"), str) and p.get("in") in ("path", "query"):
                params[(p["in"], p["name"])] = p
    props, required = {}, []
    for p in params.values():  # insertion order: path-level first, then the operation's
        name = p["name"]
        if name in props:
            continue
        props[name] = prop_schema(spec, p.get("schema"), text(p.get("description")))
        if (p["in"] == "path" or truthy(p.get("required"))) and name not in required:
            required.append(name)
    body = deref(spec, op.get("requestBody"))
    if body:
        media = (body.get("content") or {}).get("application/json")
        bs = deref(spec, (media or {}).get("schema"))
        if bs and isinstance(bs.get("properties"), dict):
            breq = bs.get("required") if isinstance(bs.get("required"), list) else []
            for name, ps in bs["properties"].items():
                if name in props:
                    continue
                props[name] = prop_schema(spec, ps)
                if name in breq and name not in required:
                    required.append(name)
    return {"type": "object", "properties": props, "required": required}


def describe(op):
    summary, desc = text(op.get("summary")), text(op.get("description"))
    if not summary or desc.lower().startswith(summary.lower()):
        return desc
    if not desc:
        return summary
    if summary[-1] not in ".!?:":
        summary += "."
    return summary + " " + desc


def tool_name(op, method, path, taken):
    base = text(op.get("operationId")) or f"{method}_{path}"
    base = NAME_BAD.sub("_", base)
    if not op.get("operationId"):
        base = re.sub(r"_+", "_", base).strip("_")
    base = base[:64] or "op"
    name, n = base, 1
    while name in taken:
        n += 1
        suffix = f"_{n}"
        name = base[:64 - len(suffix)] + suffix
    taken.add(name)
    return name


def template(path):
    return re.sub(r"\{[^}]*\}", "{}", path.strip().rstrip("/") or "/")


def server_description(spec):
    info = spec.get("info") or {}
    desc = text(info.get("description"))
    # TMDB's info.description is the API editor's placeholder ("## Welcome ... This is a place to
    # put general notes ... No Description"); then fall back to the title and the base URL.
    if desc and "No Description" not in desc and not desc.startswith("#"):
        first = re.split(r"(?<=[.!?])\s", desc, maxsplit=1)[0]
        return re.sub(r"\s+", " ", first).strip()
    title = text(info.get("title"))
    urls = [text(s.get("url")) for s in spec.get("servers") or [] if isinstance(s, dict)]
    return ", ".join(x for x in [title] + urls[:1] if x)


def convert_server(server, spec):
    tools, index, taken = [], {}, set()
    for path, item in spec["paths"].items():
        if not isinstance(item, dict):
            continue
        for method in [m for m in item if m in METHODS]:
            op = item[method]
            name = tool_name(op, method, path, taken)
            tools.append({"name": name, "description": describe(op),
                          "inputSchema": input_schema(spec, item, op)})
            key = (method.upper(), template(path))
            if key in index:
                sys.exit(f"{server}: {method.upper()} {path} repeats a path template")
            index[key] = name
    return {"server": server, "description": server_description(spec), "tools": tools}, index


def write_catalog(path, cat):
    lines = [json.dumps({"server": cat["server"], "description": cat["description"]},
                        ensure_ascii=False)[:-1] + ', "tools": [']
    lines.append(",\n".join(json.dumps(t, ensure_ascii=False) for t in cat["tools"]))
    lines.append("]}")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="clone or bare git dir of Yifan-Song793/RestGPT")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()

    os.makedirs(os.path.join(args.out, "catalog"), exist_ok=True)
    queries, dropped = [], []
    for server, spec_path, data_path in SETS:
        spec = json.loads(show(args.repo, spec_path))
        cat, index = convert_server(server, spec)
        write_catalog(os.path.join(args.out, "catalog", f"{server}.json"), cat)
        for n, item in enumerate(json.loads(show(args.repo, data_path)), 1):
            qid = f"restbench-{server}-{n}"
            labels, bad = [], []
            for step in item.get("solution") or []:
                parts = step.split(None, 1)
                key = (parts[0].upper(), template(parts[1])) if len(parts) == 2 else None
                if key not in index:
                    bad.append(step)
                elif index[key] not in labels:
                    labels.append(index[key])
            query = re.sub(r"\s+", " ", text(item.get("query")))
            if bad or not labels or not query:
                dropped.append((qid, bad))
                continue
            queries.append({"id": qid, "query": query, "lang": "en", "kind": "request",
                            "relevant": [{"server": server, "tool": t} for t in labels],
                            "category": server})
    with open(os.path.join(args.out, "queries.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    for qid, bad in dropped:
        print(f"dropped {qid}: no operation for {bad}", file=sys.stderr)
    print(f"{len(queries)} queries written, {len(dropped)} dropped", file=sys.stderr)


if __name__ == "__main__":
    main()
