"""Run queries.sql with DuckDB over the tables `sse-replay scan -o DIR` (or the Spark job) wrote.

    python duckdb_queries.py TABLES_DIR                 # every query, printed
    python duckdb_queries.py TABLES_DIR --query groups  # one
    python duckdb_queries.py TABLES_DIR --check SUMMARY.json
        # rebuild `sse-replay scan --json`'s summary from the `groups`, `finding_kinds` and
        # `naive_failures` queries and compare; exit 1 on any difference
    python duckdb_queries.py TABLES_DIR --same-rows OTHER_DIR
        # the two sets of tables hold the same rows (e.g. the Spark job's and scan's own), the
        # scan_id column aside

TABLES_DIR holds streams.parquet, calls.parquet and findings.parquet (scan), or the folders
streams/, calls/ and findings/ of partitioned Parquet files (the Spark job).
"""

import argparse
import json
import os
import re
import sys

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ("streams", "calls", "findings")


def queries(path=os.path.join(HERE, "queries.sql")):
    """The named queries of queries.sql, in order: {name: sql}."""
    text = open(path, encoding="utf-8").read()
    out = {}
    for block in re.split(r"^-- name: ", text, flags=re.M)[1:]:
        name, _, body = block.partition("\n")
        out[name.strip()] = body.strip().rstrip(";")
    return out


def connect(tables_dir):
    """A DuckDB connection with the views streams, calls and findings over the tables."""
    con = duckdb.connect()
    for t in TABLES:
        single = os.path.join(tables_dir, f"{t}.parquet")
        if os.path.exists(single):
            source = f"read_parquet('{single}')"
        else:
            pattern = os.path.join(tables_dir, t, "**", "*.parquet")
            types = partition_types(tables_dir, t)
            source = (f"read_parquet('{pattern}', hive_partitioning = true, union_by_name = true"
                      f"{', hive_types = ' + types if types else ''})")
            # Spark writes a null partition value as this folder name: it is a null again here.
            nulls = ", ".join(f"nullif({c}, '__HIVE_DEFAULT_PARTITION__') AS {c}"
                              for c in text_partitions(tables_dir, t))
            if nulls:
                source = f"(SELECT * REPLACE ({nulls}) FROM {source})"
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM {source}")
    return con


def text_partitions(tables_dir, table):
    """The partition columns of a table that hold text (where a null can be a folder name)."""
    try:
        schema = json.load(open(os.path.join(tables_dir, "_schema.json"), encoding="utf-8"))
    except OSError:
        return []
    kinds = {c["name"]: c["type"] for c in schema["tables"][table]["columns"]}
    cols = {d.split("=", 1)[0] for d in os.listdir(os.path.join(tables_dir, table)) if "=" in d}
    return [c for c in sorted(cols) if kinds.get(c) == "string"]


def partition_types(tables_dir, table):
    """The DuckDB types of a table's partition columns (`col=value` folders), from the
    `_schema.json` the Spark job writes beside the tables: DuckDB would read `true` as text."""
    try:
        schema = json.load(open(os.path.join(tables_dir, "_schema.json"), encoding="utf-8"))
    except OSError:
        return ""
    duck = {"bool": "BOOLEAN", "int64": "BIGINT", "string": "VARCHAR"}
    kinds = {c["name"]: c["type"] for c in schema["tables"][table]["columns"]}
    cols = {d.split("=", 1)[0] for d in os.listdir(os.path.join(tables_dir, table)) if "=" in d}
    pairs = [f"'{c}': '{duck[kinds[c]]}'" for c in sorted(cols) if c in kinds]
    return "{" + ", ".join(pairs) + "}" if pairs else ""


def rows(con, sql):
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def summary(con, q, strategies, files, other_files, tables_dir):
    """scan --json's summary, rebuilt from the queries' answers. `other_files` (left unread for
    their extension) have no row: they come from the summary being checked."""
    def empty():
        return {
            "streams": 0,
            "not_ok": 0,
            "finding_kinds": {},
            "naive_failures": {s: {"ran": 0, "failed": 0} for s in strategies},
            "first_call": {"streams": 0, "p50_us": None, "p95_us": None},
        }

    groups = {}
    for r in rows(con, q["groups"]):
        key = (r["dialect"], r["provider_host"], r["model"])
        g = groups.setdefault(key, empty())
        g["streams"], g["not_ok"] = r["streams"], r["not_ok"]
        g["first_call"] = {
            "streams": r["first_call_streams"],
            "p50_us": r["first_call_p50_us"],
            "p95_us": r["first_call_p95_us"],
        }
    for r in rows(con, q["finding_kinds"]):
        key = (r["dialect"], r["provider_host"], r["model"])
        groups[key]["finding_kinds"][r["kind"]] = r["streams"]
    for r in rows(con, q["naive_failures"]):
        key = (r["dialect"], r["provider_host"], r["model"])
        groups[key]["naive_failures"][r["strategy"]] = {"ran": r["ran"], "failed": r["failed"]}

    # The total: the same three queries without the group's three columns (grouping by nothing
    # but the kind or the strategy), so what is checked is the text of queries.sql itself.
    whole = {name: re.sub(r"\b(s\.)?dialect,\s*(s\.)?provider_host,\s*(s\.)?model,", "", sql)
             for name, sql in q.items() if name in ("groups", "finding_kinds", "naive_failures")}
    total = empty()
    for r in rows(con, whole["groups"]):
        total["streams"], total["not_ok"] = r["streams"], r["not_ok"]
        total["first_call"] = {
            "streams": r["first_call_streams"],
            "p50_us": r["first_call_p50_us"],
            "p95_us": r["first_call_p95_us"],
        }
    for r in rows(con, whole["finding_kinds"]):
        total["finding_kinds"][r["kind"]] = r["streams"]
    for r in rows(con, whole["naive_failures"]):
        total["naive_failures"][r["strategy"]] = {"ran": r["ran"], "failed": r["failed"]}

    def sort_key(k):
        return tuple((v is not None, v or "") for v in k)

    out_groups = []
    for key in sorted(groups, key=sort_key):
        g = groups[key]
        g["finding_kinds"] = dict(sorted(g["finding_kinds"].items()))
        out_groups.append({**g, "dialect": key[0], "provider_host": key[1], "model": key[2]})
    total["finding_kinds"] = dict(sorted(total["finding_kinds"].items()))
    (skipped,) = con.execute("SELECT count(*) FROM streams WHERE verdict = 'skipped'").fetchone()
    (unreadable,) = con.execute("SELECT count(*) FROM streams WHERE verdict = 'unreadable'").fetchone()
    return {"schema_version": schema_version(con, tables_dir), "files": files, "skipped": skipped,
            "other_files": other_files, "unreadable": unreadable,
            "groups": out_groups, "total": total}


def schema_version(con, tables_dir):
    """The tables' schema version: the `_schema.json` the Spark job writes, else the key-value
    metadata of scan's `streams.parquet`."""
    try:
        return json.load(open(os.path.join(tables_dir, "_schema.json"), encoding="utf-8"))["schema_version"]
    except OSError:
        pass
    path = os.path.join(tables_dir, "streams.parquet").replace("'", "''")
    row = con.execute(
        f"SELECT decode(value) FROM parquet_kv_metadata('{path}') WHERE decode(key) = 'schema_version'"
    ).fetchone()
    return int(row[0]) if row else None


def same_rows(con, other_dir):
    """Each table holds the same rows (as multisets, columns by name) in both sets of tables."""
    other = connect(other_dir)
    differ = 0
    for t in TABLES:
        cols = [r[0] for r in other.execute(f"DESCRIBE {t}").fetchall()]
        mine = [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall()]
        if sorted(cols) != sorted(mine):
            print(f"{t}: columns differ: {sorted(set(cols) ^ set(mine))}", file=sys.stderr)
            differ += 1
            continue
        # The scan id tells two runs apart by design: every other column must agree.
        select = ", ".join(f'"{c}"' for c in cols if c != "scan_id")
        a = con.execute(f"SELECT {select} FROM {t}").fetchall()
        b = other.execute(f"SELECT {select} FROM {t}").fetchall()
        key = lambda r: tuple((v is None, str(v)) for v in r)  # noqa: E731
        if sorted(a, key=key) != sorted(b, key=key):
            print(f"{t}: {len(a)} rows here, {len(b)} there, not the same", file=sys.stderr)
            differ += 1
        else:
            print(f"{t}: the same {len(a)} rows")
    return 1 if differ else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tables")
    ap.add_argument("--query", help="run only this named query")
    ap.add_argument("--check", metavar="SUMMARY_JSON", help="compare with scan --json's summary")
    ap.add_argument("--same-rows", metavar="OTHER_DIR", help="compare the rows with other tables")
    a = ap.parse_args()
    con = connect(a.tables)
    q = queries()
    if a.same_rows:
        return same_rows(con, a.same_rows)
    if a.check:
        want = json.load(open(a.check, encoding="utf-8"))
        strategies = list(want["total"]["naive_failures"].keys())
        files = con.execute("SELECT count(DISTINCT source_file) FROM streams").fetchone()[0]
        got = summary(con, q, strategies, files, want.get("other_files", 0), a.tables)
        if got == want:
            n = len(want["groups"])
            print(f"DuckDB agrees with scan's summary: {want['total']['streams']} streams, {n} groups")
            return 0
        for g, w in zip(got["groups"], want["groups"]):
            if g != w:
                print("first differing group:\n duckdb:", json.dumps(g, sort_keys=True),
                      "\n   scan:", json.dumps(w, sort_keys=True), file=sys.stderr)
                break
        else:
            print("groups or total differ:\n duckdb:", json.dumps(got["total"], sort_keys=True),
                  "\n   scan:", json.dumps(want["total"], sort_keys=True), file=sys.stderr)
        return 1
    for name, sql in q.items():
        if a.query and name != a.query:
            continue
        print(f"-- {name}")
        con.sql(sql).show(max_rows=40, max_width=160)
    return 0


if __name__ == "__main__":
    sys.exit(main())
