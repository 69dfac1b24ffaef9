#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""schema-compare.py - one schema on both backends (issue 34): builds a
database's schema from its migrations on SQLite (MIGRATIONS/*.sql in name
order) and on PostgreSQL (the same names, each replaced by
MIGRATIONS/postgres/NAME where that exists, as lib/sql picks them), and
compares what both hold by the correspondence of docs/architecture.md
("One schema, checked"):

  tables        by name (lib/sql's own acc_schema_version left out)
  columns       name, type (INTEGER = bigint, TEXT = text, BLOB = bytea,
                REAL = double precision; anything else is itself, so a
                PostgreSQL integer, 32 bits, is not SQLite's INTEGER),
                NOT NULL (a primary key's columns are NOT NULL on both)
  keys          the primary key's columns in order; each UNIQUE constraint
                by its columns
  indexes       each CREATE INDEX by name: its columns, unique or not,
                partial or not
  constraints   foreign keys (columns, the table and columns they name,
                ON DELETE); how many CHECK constraints a table has

PostgreSQL's identity column named rowid stands for SQLite's implicit rowid
(the journal's order), and is left out.  What differs on purpose is listed
in ALLOWED below, each with its reason: it is printed, not counted; an
allowance that no longer matches a difference is itself a failure.

  schema-compare.py --url URL MIGRATIONS [MIGRATIONS...]
      each folder's schema on both, every difference printed; exit 1 when
      there is one
  schema-compare.py --url URL --self-check MIGRATIONS
      shows that the comparison fails: the migrations with a last one that
      differs between the two sides in one way each (a column, a type, NOT
      NULL, an index, a unique key, a foreign key, a CHECK) must each be
      found, and one that is the same on both must pass

URL is a PostgreSQL server's (libpq's URL, its database a scratch one):
a database is made there for each build and dropped after.
"""
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

# Each side's types by the name of what they hold; a type without a
# counterpart keeps its own name (in capitals on SQLite's side), so it
# matches nothing of the other's.
SQLITE_TYPES = [("INT", "int64"), ("CHAR", "text"), ("CLOB", "text"), ("TEXT", "text"),
                ("BLOB", "bytes"), ("REAL", "float64"), ("FLOA", "float64"), ("DOUB", "float64")]
PG_TYPES = {"bigint": "int64", "text": "text", "bytea": "bytes", "double precision": "float64"}


# Differences by design: (folder's last two parts, side, fact, why).
_GONE = ("the tombstones of cancelled bookings: a calendar that several processes share "
         "(PostgreSQL) tells them what went; a file has one writer that never reads back "
         "(lib/ledger/migrations/0002_change_no.sql)")
ALLOWED = [
    ("lib/ledger/migrations", "PostgreSQL", "table booking_gone", _GONE),
    ("lib/ledger/migrations", "PostgreSQL", "column booking_gone.key text NOT NULL", _GONE),
    ("lib/ledger/migrations", "PostgreSQL", "column booking_gone.resource text NOT NULL", _GONE),
    ("lib/ledger/migrations", "PostgreSQL", "column booking_gone.end_time int64 NOT NULL",
     _GONE),
    ("lib/ledger/migrations", "PostgreSQL", "column booking_gone.change_no int64 NOT NULL",
     _GONE),
    ("lib/ledger/migrations", "PostgreSQL",
     "index booking_gone_change_no on booking_gone (resource, change_no)", _GONE),
    ("lib/ledger/migrations", "PostgreSQL",
     "index booking_change_no on booking (resource, change_no)",
     "a process reads a resource's bookings changed since it last looked; a file's one "
     "writer reads its calendar once, at start"),
    ("lib/ledger/migrations", "PostgreSQL",
     "index booking_resource on booking (resource, end_time)",
     "a process reads and prunes one resource's bookings under its lock; a file's one "
     "writer reads the calendar whole, at start"),
]


def allowed_for(folder):
    key = "/".join(os.path.abspath(folder).split(os.sep)[-3:])
    return [(side, fact, why) for where, side, fact, why in ALLOWED if key.endswith(where)]


def sqlite_type(decl):
    d = (decl or "").upper()
    if not d:
        return "bytes"
    for key, name in SQLITE_TYPES:
        if key in d:
            return name
    return d


def migrations(folder):
    """The (name, sqlite text, postgresql text) of a folder, in name order."""
    out = []
    pg_dir = os.path.join(folder, "postgres")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".sql"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            lite = f.read()
        pg = lite
        if os.path.exists(os.path.join(pg_dir, name)):
            with open(os.path.join(pg_dir, name), encoding="utf-8") as f:
                pg = f.read()
        out.append((name, lite, pg))
    return out


def checks_in(sql):
    """How many CHECK constraints a CREATE TABLE's text holds."""
    text = re.sub(r"--[^\n]*", "", sql)
    text = re.sub(r"'(?:[^']|'')*'", "''", text)
    return len(re.findall(r"\bCHECK\s*\(", text, re.IGNORECASE))


def sqlite_schema(migs):
    db = sqlite3.connect(":memory:")
    for name, lite, _ in migs:
        try:
            db.executescript(lite)
        except sqlite3.Error as e:
            raise SystemExit(f"SQLite: migration {name}: {e}")
    facts = set()
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    for t in tables:
        facts.add(f"table {t}")
        cols = db.execute(f"PRAGMA table_info('{t}')").fetchall()
        pk = sorted((c[5], c[1]) for c in cols if c[5])
        for cid, col, decl, notnull, _default, pkpos in cols:
            nn = bool(notnull or pkpos)
            facts.add(f"column {t}.{col} {sqlite_type(decl)}{' NOT NULL' if nn else ''}")
        if pk:
            facts.add(f"primary key {t} ({', '.join(c for _, c in pk)})")
        sql = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0]
        n = checks_in(sql)
        if n:
            facts.add(f"check {t}: {n}")
        for _seq, iname, unique, origin, partial in db.execute(f"PRAGMA index_list('{t}')"):
            icols = [r[2] if r[2] is not None else "<expression>"
                     for r in db.execute(f"PRAGMA index_info('{iname}')")]
            if origin == "pk":
                continue
            if origin == "u":
                facts.add(f"unique {t} ({', '.join(icols)})")
            else:
                facts.add(f"index {iname} on {t} ({', '.join(icols)})"
                          f"{' unique' if unique else ''}{' partial' if partial else ''}")
        fks = {}
        for fid, seq, ref, frm, to, _upd, on_delete, _match in db.execute(
                f"PRAGMA foreign_key_list('{t}')"):
            fks.setdefault(fid, {"ref": ref, "from": [], "to": [], "del": on_delete})
            fks[fid]["from"].append((seq, frm))
            fks[fid]["to"].append((seq, to))
        for fk in fks.values():
            to = [c for _, c in sorted(fk["to"])]
            if None in to:  # the referenced table's primary key
                rc = db.execute(f"PRAGMA table_info('{fk['ref']}')").fetchall()
                to = [c[1] for c in sorted((c for c in rc if c[5]), key=lambda c: c[5])]
            facts.add(f"foreign key {t} ({', '.join(c for _, c in sorted(fk['from']))}) -> "
                      f"{fk['ref']} ({', '.join(to)}) on delete {fk['del'].lower()}")
    return facts


class Pg:
    """A scratch database on the server of url, made and dropped."""

    def __init__(self, url, name):
        self.admin = url
        self.name = name
        self.url = re.sub(r"(postgres(?:ql)?://[^/?]*)(/[^?]*)?", r"\1/" + name, url, count=1)
        self.psql(self.admin, f"DROP DATABASE IF EXISTS {name}")
        self.psql(self.admin, f"CREATE DATABASE {name}")

    @staticmethod
    def psql(url, sql=None, path=None, one=True):
        cmd = ["psql", url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-F", "\t"]
        cmd += (["-1"] if one else []) + ["-f", path] if path else ["-c", sql]
        env = dict(os.environ, PGOPTIONS="-c client_min_messages=warning")
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if r.returncode != 0:
            last = [ln for ln in r.stdout.splitlines() if ln.startswith("migration ")]
            raise RuntimeError((last[-1] + ": " if last else "") + r.stderr.strip())
        return [line.split("\t") for line in r.stdout.splitlines() if line]

    def q(self, sql):
        return self.psql(self.url, sql)

    def drop(self):
        self.psql(self.admin, f"DROP DATABASE IF EXISTS {self.name}")


def pg_schema(url, name, migs):
    pg = Pg(url, name)
    try:
        # one psql for all, each migration in a transaction of its own as
        # lib/sql runs them, named by a line psql echoes when it fails
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "all.sql")
            with open(path, "w", encoding="utf-8") as f:
                for mname, _, text in migs:
                    f.write(f"\\echo migration {mname}\nBEGIN;\n{text}\n;\nCOMMIT;\n")
            try:
                pg.psql(pg.url, path=path, one=False)
            except RuntimeError as e:
                raise SystemExit(f"PostgreSQL: {e}")
        return pg_facts(pg)
    finally:
        pg.drop()


def pg_facts(pg):
    """What the public schema holds, in four queries over every table."""
    facts = set()
    tables = "c.relkind IN ('r', 'p') AND c.relnamespace = 'public'::regnamespace AND " \
             "c.relname <> 'acc_schema_version'"
    for (t,) in pg.q(f"SELECT c.relname FROM pg_class c WHERE {tables}"):
        facts.add(f"table {t}")
    for t, col, typ, notnull, ident in pg.q(
            "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, "
            "a.attidentity FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            f"WHERE {tables} AND a.attnum > 0 AND NOT a.attisdropped"):
        if col == "rowid" and ident:
            continue  # SQLite's implicit rowid
        typ = PG_TYPES.get(typ, typ)
        facts.add(f"column {t}.{col} {typ}{' NOT NULL' if notnull == 't' else ''}")
    n_check = {}
    for t, typ, cols, ref, refcols, deltype in pg.q(
            "SELECT r.relname, c.contype, "
            "(SELECT string_agg(a.attname, ', ' ORDER BY k.i) FROM unnest(c.conkey) WITH "
            "ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n), "
            "coalesce(c.confrelid::regclass::text, ''), "
            "coalesce((SELECT string_agg(a.attname, ', ' ORDER BY k.i) FROM unnest(c.confkey) WITH "
            "ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.confrelid AND "
            "a.attnum = k.n), ''), c.confdeltype "
            f"FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid "
            f"WHERE {tables.replace('c.', 'r.')}"):
        if typ == "p":
            facts.add(f"primary key {t} ({cols})")
        elif typ == "u":
            facts.add(f"unique {t} ({cols})")
        elif typ == "c":
            n_check[t] = n_check.get(t, 0) + 1
        elif typ == "f":
            action = {"a": "no action", "r": "restrict", "c": "cascade", "n": "set null",
                      "d": "set default"}[deltype]
            facts.add(f"foreign key {t} ({cols}) -> {ref} ({refcols}) on delete {action}")
    for t, n in n_check.items():
        facts.add(f"check {t}: {n}")
    for t, iname, unique, partial, cols in pg.q(
            "SELECT c.relname, i.relname, x.indisunique, x.indpred IS NOT NULL, "
            "(SELECT string_agg(coalesce(a.attname, '<expression>'), ', ' ORDER BY k.i) FROM "
            "unnest(x.indkey::int2[]) WITH ORDINALITY k(n, i) LEFT JOIN pg_attribute a ON "
            "a.attrelid = x.indrelid AND a.attnum = k.n) "
            "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON "
            f"c.oid = x.indrelid WHERE {tables} AND NOT EXISTS (SELECT 1 FROM "
            "pg_constraint k WHERE k.conindid = x.indexrelid AND k.conrelid = x.indrelid)"):
        facts.add(f"index {iname} on {t} ({cols})"
                  f"{' unique' if unique == 't' else ''}{' partial' if partial == 't' else ''}")
    return facts


def compare(url, folder, tag):
    """The facts of SQLite's schema, the differences that count, and the
    allowed ones found."""
    migs = migrations(folder)
    lite = sqlite_schema(migs)
    pg = pg_schema(url, f"schema_{tag}_{os.getpid()}", migs)
    found = [("SQLite", f) for f in sorted(lite - pg)] + [("PostgreSQL", f) for f in
                                                           sorted(pg - lite)]
    allowed = allowed_for(folder)
    diff, excused = [], []
    for side, fact in found:
        why = [w for s, f, w in allowed if s == side and f == fact]
        if why:
            excused.append(f"  allowed, {side} only: {fact} ({why[0]})")
        else:
            diff.append(f"  {side} only:{' ' * (11 - len(side))}{fact}")
    for side, fact, _ in allowed:
        if (side, fact) not in found:
            diff.append(f"  allowed but not there ({side} only): {fact}: remove it from ALLOWED")
    return lite, diff, excused


def self_check(url, folder):
    """Each one-sided change must be found; the same change on both passes."""
    cases = [
        ("the same on both", "CREATE TABLE sc (a INTEGER NOT NULL, b TEXT);",
         "CREATE TABLE sc (a BIGINT NOT NULL, b TEXT);", None),
        ("a column on one side", "CREATE TABLE sc (a INTEGER NOT NULL, b TEXT);",
         "CREATE TABLE sc (a BIGINT NOT NULL);", "column sc.b text"),
        ("a 32-bit integer", "CREATE TABLE sc (a INTEGER NOT NULL);",
         "CREATE TABLE sc (a INTEGER NOT NULL);", "column sc.a int64 NOT NULL"),
        ("NOT NULL on one side", "CREATE TABLE sc (a INTEGER NOT NULL);",
         "CREATE TABLE sc (a BIGINT);", "column sc.a int64 NOT NULL"),
        ("an index on one side", "CREATE TABLE sc (a INTEGER); CREATE INDEX sc_a ON sc(a);",
         "CREATE TABLE sc (a BIGINT);", "index sc_a on sc (a)"),
        ("a unique key on one side", "CREATE TABLE sc (a INTEGER UNIQUE);",
         "CREATE TABLE sc (a BIGINT);", "unique sc (a)"),
        ("another primary key", "CREATE TABLE sc (a INTEGER, b TEXT, PRIMARY KEY (a, b));",
         "CREATE TABLE sc (a BIGINT, b TEXT, PRIMARY KEY (b, a));", "primary key sc (a, b)"),
        ("a foreign key on one side",
         "CREATE TABLE sc (a INTEGER REFERENCES agreement(seq) ON DELETE CASCADE);",
         "CREATE TABLE sc (a BIGINT);", "foreign key sc (a) -> agreement (seq)"),
        ("a CHECK on one side", "CREATE TABLE sc (a INTEGER CHECK (a > 0));",
         "CREATE TABLE sc (a BIGINT);", "check sc: 1"),
        ("an existing table changed on one side", "ALTER TABLE agreement ADD COLUMN extra TEXT;",
         "SELECT 1;", "column agreement.extra text"),
    ]
    failed = 0
    for i, (what, lite, pg, expect) in enumerate(cases):
        with tempfile.TemporaryDirectory() as tmp:
            dst = os.path.join(tmp, "m")
            shutil.copytree(folder, dst)
            os.makedirs(os.path.join(dst, "postgres"), exist_ok=True)
            with open(os.path.join(dst, "9999_self_check.sql"), "w", encoding="utf-8") as f:
                f.write(lite)
            with open(os.path.join(dst, "postgres", "9999_self_check.sql"), "w",
                      encoding="utf-8") as f:
                f.write(pg)
            _, diff, _ = compare(url, dst, f"self{i}")
        found = any(expect in line for line in diff) if expect else not diff
        print(f"{'ok  ' if found else 'FAIL'} {what}: "
              f"{'; '.join(d.strip() for d in diff) if diff else 'no difference'}")
        failed += not found
    return failed


def main(argv):
    args = argv[1:]
    url, check = None, False
    while args and args[0].startswith("--"):
        if args[0] == "--url" and len(args) > 1:
            url, args = args[1], args[2:]
        elif args[0] == "--self-check":
            check, args = True, args[1:]
        else:
            break
    if not url or not args or (check and len(args) != 1):
        print(__doc__.split("\n\n")[-2], file=sys.stderr)
        return 2
    if check:
        failed = self_check(url, args[0])
        print(f"self-check: {'every one-sided change found' if not failed else f'{failed} missed'}")
        return 1 if failed else 0
    bad = 0
    for folder in args:
        facts, diff, excused = compare(url, folder, re.sub(r"\W", "_", os.path.basename(
            os.path.dirname(os.path.abspath(folder)))))
        tables = sum(1 for f in facts if f.startswith("table "))
        if diff:
            bad += 1
            print(f"{folder}: the schemas differ:")
            print("\n".join(diff))
        else:
            print(f"{folder}: the same schema on both ({tables} tables, {len(facts)} facts "
                  f"of SQLite's)")
        if excused:
            print("\n".join(excused))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
