#!/usr/bin/env python3
"""Checks the editor grammars (tools/editors) against mlsc's own lexer.

A small TextMate tokeniser, in Python, runs the grammar over every .mls file
in examples/, registries/, stdlib/ and fuzz/corpus/, every ```mls block in
docs/*.md, and a built-in file of lexical edge cases (the table in
docs/language.md, "Lexical structure"). `mlsc compile --emit tokens FILE`
gives the real tokens; for each one the scopes the grammar gave its
characters must say the same thing:

  QUANTITY  the number part constant.numeric, the unit part
            keyword.other.unit (a QUANTITY token whose unit part is empty,
            as `1e3`, which the parser reads as a plain number, is checked
            as a NUMBER)
  NUMBER    constant.numeric      DATE    constant.other.date
  STRING    string.quoted.double
  keywords  the scope KEYWORD_SCOPES names for the kind; `note` and `step`
            are names as well, and count as keywords only where the parser
            can read them so: `note` before a string, `step` neither after
            `.` nor before `=`, `{` or `.`
  the rest  (names, operators, punctuation, `note`/`step` as names): none
            of the scopes above, and no comment scope anywhere in a token.

Every mismatch is printed as FILE:LINE:COL and the exit code is 1. Tokens
that mlsc reports a lexical error at (an unexpected character, a string
with no closing quote; fuzz/corpus has files broken on purpose) are
skipped: their tokens are repairs made for the parser, not source text.

The grammar's regexes must compile under Python's `re`, without the
constructs (possessive quantifiers, atomic groups, named groups, \\Z) that
one of the two engines lacks or reads differently: written in the subset
that Oniguruma (VS Code, TextMate) and Python share, they mean the same in
both. The keyword kinds are read from grammar/Mls.g4, so a keyword
added there fails this check until the grammar and KEYWORD_SCOPES know it.
Also checked: package.json is valid JSON, and the grammar and language
configuration it names exist, with the grammar's scopeName.

With --vim PROGRAM, when that vim is installed, tools/editors/vim is held to
the same rules: vim, with no vimrc and only that runtime folder, detects the
filetype and dumps the syntax group of every byte (VIM_SCOPES maps a group
to the scope it stands for; the keywords share one group).

usage: check-tm-grammar.py --mlsc PATH [--root SRC] [--grammar FILE]
                           [--vim PROGRAM]
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The scope each keyword token must carry where it is used as a keyword.
KEYWORD_SCOPES = {
    "IMPORT": "keyword.control.import.mls",
    "ASSERT": "keyword.other.assert.mls",
    "LET": "keyword.other.let.mls",
    "FROM": "keyword.other.from.mls",
    "NOTE": "keyword.other.note.mls",
    "STEP": "keyword.other.step.mls",
    "IN": "keyword.operator.in.mls",
    "AND": "keyword.operator.logical.mls",
    "OR": "keyword.operator.logical.mls",
    "NOT": "keyword.operator.logical.mls",
    "TRUE": "constant.language.boolean.mls",
    "FALSE": "constant.language.boolean.mls",
}
NUMERIC = "constant.numeric"
UNIT = "keyword.other.unit"
DATE = "constant.other.date"
STRING = "string.quoted.double"
COMMENT = "comment"
# Scopes that say what kind of literal or keyword a character belongs to;
# a token may carry only those its kind expects.
CATEGORIES = [NUMERIC, UNIT, DATE, STRING, COMMENT] + sorted(
    set(KEYWORD_SCOPES.values()))

# Lexical edge cases: each line is one row of docs/language.md's table or a
# case the lexer settles on purpose (Parser.cpp, UnitLexer).
EDGE_CASES = """\
import registries.hardware.nvidia
let a = 3.35 TB/s
let b = 80 GB / 2
let c = 10 GB/2
let d = 0.55 from src
let e = 2\tkg*m^2/s^2
let f = 5
  + 2 GiB
let g = 1_000_000 tok
let h = [1 .. 10 step 2, 1..3, 0.5 ms .. 2 ms step 0.5 ms]
let i = 2026-06-01
let j = 50 %
let k = 1e-3 s + 1e3 + 70.6e9 + 2E+5 + 3e + 1e GB + 3e5x
let l = 2 GBx
let m = 3 GB.foo
let n = 2 m^2x + 2 GB*from + 2in + 3 in [1, 2] + 2 m^-1
let o = true and not false or x.note == "a \\"quoted\\" \\\\ # not a comment"
let p = 5 %x
source s { note = "n"; step = 1; kind = paper }
x.y = 4 from s note "why"
assert H100_SXM.hbm.capacity >= 80 GB, "fits"
sweep w { vary { b.batch in 1 .. 8 step 1; b.step in [1, 2] } }
"""


def keyword_kinds(root):
    """The keyword token kinds of grammar/Mls.g4 (`FROM : 'from' ;`)."""
    with open(os.path.join(root, "grammar", "Mls.g4"), encoding="utf-8") as f:
        return set(re.findall(r"^([A-Z]+)\s*:\s*'[a-z]+'\s*;", f.read(), re.M))


class Grammar:
    """A TextMate grammar reduced to what the tokeniser needs: rules with
    `match`, `begin`/`end`, `name`, `captures` and `patterns`, and
    `include` of `#repository` items or `$self`."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.json = json.load(f)
        self.errors = []
        self.root = self._rule(self.json)
        self.repository = {
            key: self._rule(spec, "repository." + key)
            for key, spec in self.json.get("repository", {}).items()}
        # Expanding the includes now reports a dangling one before any use.
        for rule in [self.root] + list(self.repository.values()):
            self.rules_in(rule)

    # Constructs outside the shared subset that a recent Python may still
    # compile, looked for in the regex with its escapes and character
    # classes blanked out.
    OUTSIDE_SUBSET = [
        (re.compile(r"[*+?}]\+"), "a possessive quantifier (not in Python "
         "before 3.11)"),
        (re.compile(r"\(\?>"), "an atomic group (not in Python before 3.11)"),
        (re.compile(r"\(\?P?<[A-Za-z]"), "a named group (Oniguruma writes "
         "(?<name>...), Python (?P<name>...))"),
    ]

    def _regex(self, text, where):
        bare = re.sub(r"\[\^?\]?[^\]]*\]", "c", re.sub(r"\\.", "e", text))
        for construct, what in self.OUTSIDE_SUBSET:
            if construct.search(bare):
                self.errors.append("%s: regex has %s" % (where, what))
        if "\\Z" in text:
            self.errors.append("%s: regex has \\Z, which Oniguruma and Python "
                               "re read differently" % where)
        try:
            return re.compile(text)
        except re.error as e:
            self.errors.append("%s: regex does not compile in Python re: %s "
                               "at `%s`" % (where, e.msg, text[e.pos or 0:][:20]))
            return re.compile(r"(?!)")

    def _rule(self, spec, where="patterns"):
        rule = {"name": spec.get("name"), "contentName": spec.get("contentName")}
        if "match" in spec:
            rule["match"] = self._regex(spec["match"], where)
            rule["captures"] = spec.get("captures", {})
        if "begin" in spec:
            rule["begin"] = self._regex(spec["begin"], where + ".begin")
            rule["end"] = self._regex(spec["end"], where + ".end")
            rule["beginCaptures"] = spec.get("beginCaptures",
                                             spec.get("captures", {}))
            rule["endCaptures"] = spec.get("endCaptures",
                                           spec.get("captures", {}))
        if "include" in spec:
            rule["include"] = spec["include"]
        rule["patterns"] = [self._rule(p, "%s[%d]" % (where, i))
                            for i, p in enumerate(spec.get("patterns", []))]
        return rule

    def rules_in(self, rule):
        """The rules tried inside `rule`, computed once."""
        if "flat" not in rule:
            rule["flat"] = self.flatten(rule["patterns"])
        return rule["flat"]

    def flatten(self, patterns, seen=()):
        """The match and begin rules of a pattern list, includes expanded,
        in order."""
        out = []
        for rule in patterns:
            inc = rule.get("include")
            if inc is None:
                if "match" in rule or "begin" in rule:
                    out.append(rule)
                else:
                    out.extend(self.flatten(rule["patterns"], seen))
                continue
            if inc in seen:
                continue
            if inc == "$self" or inc == "$base":
                target = self.root
            elif inc.startswith("#") and inc[1:] in self.repository:
                target = self.repository[inc[1:]]
            else:
                self.errors.append("include of unknown rule %r" % inc)
                continue
            if "match" in target or "begin" in target:
                out.append(target)
            else:
                out.extend(self.flatten(target["patterns"], seen + (inc,)))
        return out


def tokenise(grammar, lines):
    """The scopes of each character: a list per line of tuples of scope
    names, the way vscode-textmate assigns them (at each position the rule
    whose match starts first wins, the earlier rule on a tie, an open
    rule's `end` before its patterns)."""
    stack = [(grammar.root, (grammar.json.get("scopeName", "source"),))]
    result = []
    for line in lines:
        text = line + "\n"
        scopes = [None] * len(text)
        pos = steps = 0
        while pos < len(text):
            steps += 1
            if steps > 4 * len(text) + 16:
                raise RuntimeError("the grammar makes no progress on %r" % line)
            rule, base = stack[-1]
            candidates = []
            if len(stack) > 1:
                candidates.append(("end", rule))
            candidates += [("rule", r) for r in grammar.rules_in(rule)]
            best = None
            for kind, r in candidates:
                regex = r["end"] if kind == "end" else r.get("match") or r["begin"]
                m = regex.search(text, pos)
                if m and (best is None or m.start() < best[2].start()):
                    best = (kind, r, m)
            if best is None:
                for i in range(pos, len(text)):
                    scopes[i] = base
                break
            kind, r, m = best
            for i in range(pos, m.start()):
                scopes[i] = base
            if kind == "end":
                outer = base[:-1] if rule.get("contentName") else base
                paint(scopes, m, outer, rule["endCaptures"])
                stack.pop()
            elif "match" in r:
                inner = base + ((r["name"],) if r["name"] else ())
                paint(scopes, m, inner, r["captures"])
            else:
                inner = base + ((r["name"],) if r["name"] else ())
                paint(scopes, m, inner, r["beginCaptures"])
                content = inner + ((r["contentName"],) if r["contentName"] else ())
                stack.append((r, content))
            if m.end() == pos and kind == "rule" and "match" in r:
                # An empty match makes no progress: step over a character.
                scopes[pos] = base
                pos += 1
            else:
                pos = m.end()
        result.append([s if s is not None else stack[-1][1] for s in scopes])
    return result


def paint(scopes, m, base, captures):
    for i in range(m.start(), m.end()):
        scopes[i] = base
    for group in sorted(captures, key=int):
        name = captures[group].get("name")
        g = int(group)
        if not name or g > (m.re.groups or 0) or m.start(g) < 0:
            continue
        for i in range(m.start(g), m.end(g)):
            scopes[i] = scopes[i] + (name,)


TOKEN_LINE = re.compile(r"^(\d+):(\d+) ([A-Z_]+)(?: `(.*)`)?$")
ERROR_LINE = re.compile(r":(\d+):(\d+): error: ")


def lex(mlsc, path):
    """mlsc's tokens of a file, and the (line, column) of each lexical
    error it reports."""
    r = subprocess.run([mlsc, "compile", "--emit", "tokens", path],
                       capture_output=True, text=True, encoding="utf-8",
                       errors="replace")
    tokens, ended = [], False
    for out in r.stdout.splitlines():
        m = TOKEN_LINE.match(out)
        if m and m.group(3) == "EOF":
            ended = True
        elif m:
            tokens.append((int(m.group(1)), int(m.group(2)), m.group(3),
                           m.group(4)))
    errors = set()
    for err in r.stderr.splitlines():
        if err.startswith(path + ":"):
            m = ERROR_LINE.match(err[len(path):])
            if m:
                errors.add((int(m.group(1)), int(m.group(2))))
    if not ended:
        raise RuntimeError("`%s compile --emit tokens %s` printed no EOF token "
                           "(exit %d): %s" % (mlsc, path, r.returncode, r.stderr))
    return tokens, errors


def has(scope_tuple, prefix):
    return any(s == prefix or s.startswith(prefix + ".") for s in scope_tuple)


def expectations(tokens, index):
    """What token `index` must carry: a list of (start offset, end offset,
    required scope) within the token, or [] when it must carry none of the
    CATEGORIES."""
    line, col, kind, text = tokens[index]
    prev = tokens[index - 1][2] if index > 0 else None
    nxt = tokens[index + 1][2] if index + 1 < len(tokens) else None
    if kind == "QUANTITY":
        m = re.match(r"[0-9_]+(?:\.[0-9_]+)?(?:[eE][+-]?[0-9][0-9_]*)?", text)
        unit = len(text) - len(text[m.end():].lstrip(" \t"))
        if unit == len(text):
            return [(0, len(text), NUMERIC)]
        return [(0, m.end(), NUMERIC), (unit, len(text), UNIT)]
    if kind == "NUMBER":
        return [(0, len(text), NUMERIC)]
    if kind == "DATE":
        return [(0, len(text), DATE)]
    if kind == "STRING":
        return [(0, len(text), STRING)]
    if kind == "NOTE" and nxt != "STRING":
        return []
    if kind == "STEP" and (prev == "DOT" or nxt in ("ASSIGN", "LBRACE", "DOT")):
        return []
    if kind in KEYWORD_SCOPES:
        return [(0, len(text), KEYWORD_SCOPES[kind])]
    return []


def check_tokens(label, lines, tokens, errors, scopes_at, line_offset,
                 same=lambda scope: scope):
    """Mismatches between the tokens and the scopes, as messages.
    `scopes_at(line index, character index)` gives the scopes of a
    character; `same` maps a scope to the one it is checked as (Vim has one
    group for several keyword scopes)."""
    categories = sorted(set(same(c) for c in CATEGORIES))
    problems = []
    for index, (line, col, kind, text) in enumerate(tokens):
        if (line, col) in errors:
            continue
        source = lines[line - 1] if line <= len(lines) else ""
        # mlsc counts columns in bytes.
        start = len(source.encode("utf-8")[:col - 1].decode("utf-8", "replace"))
        where = "%s:%d:%d" % (label, line + line_offset, col)
        if source[start:start + len(text)] != text:
            problems.append("%s: %s `%s` is not at that place in the text"
                            % (where, kind, text))
            continue
        want = expectations(tokens, index)
        for offset in range(len(text)):
            got = scopes_at(line - 1, start + offset)
            required = [same(s) for a, b, s in want if a <= offset < b]
            missing = [s for s in required if not has(got, s)]
            extra = [c for c in categories if c not in required and has(got, c)]
            if missing or extra:
                what = []
                if missing:
                    what.append("lacks " + ", ".join(missing))
                if extra:
                    what.append("has " + ", ".join(extra))
                problems.append("%s: %s `%s` at `%s` %s (scopes: %s)" % (
                    where, kind, text, text[offset], " and ".join(what),
                    " ".join(got)))
                break
    return problems


# Vim's syntax groups (tools/editors/vim/syntax/mls.vim) as the scopes they
# stand for; one group, mlsKeyword, stands for all keyword scopes.
VIM_KEYWORD = "keyword.mls-vim"
VIM_SCOPES = {
    "mlsNumber": NUMERIC, "mlsQuantity": NUMERIC, "mlsUnit": UNIT,
    "mlsDate": DATE, "mlsString": STRING, "mlsEscape": STRING,
    "mlsEscapeError": STRING, "mlsComment": COMMENT, "mlsTodo": COMMENT,
    "mlsImport": VIM_KEYWORD, "mlsLet": VIM_KEYWORD, "mlsKeyword": VIM_KEYWORD,
    "mlsWordOperator": VIM_KEYWORD, "mlsBoolean": VIM_KEYWORD,
}
VIM_DUMP = r"""
for s:file in readfile(g:mls_inputs)
  execute 'edit! ' . fnameescape(s:file)
  if &filetype !=# 'mls'
    call writefile(['filetype ' . &filetype], s:file . '.groups')
    continue
  endif
  let s:out = []
  for s:line in range(1, line('$'))
    let s:names = []
    for s:col in range(1, col([s:line, '$']) - 1)
      call add(s:names, synIDattr(synID(s:line, s:col, 0), 'name'))
    endfor
    call add(s:out, join(map(s:names, 'empty(v:val) ? "-" : v:val'), ' '))
  endfor
  call writefile(s:out, s:file . '.groups')
endfor
qall!
"""


def vim_groups(vim, runtime, paths, tmp):
    """Vim's syntax group of each byte of each file, with only the mls
    runtime folder (ftdetect picks the filetype) and no vimrc."""
    listing = os.path.join(tmp, "inputs.txt")
    script = os.path.join(tmp, "dump.vim")
    with open(listing, "w", encoding="utf-8") as f:
        f.write("\n".join(paths) + "\n")
    with open(script, "w", encoding="utf-8") as f:
        f.write(VIM_DUMP)
    subprocess.run([vim, "-N", "-u", "NONE", "-i", "NONE", "-Es",
                    "--cmd", "set runtimepath^=" + runtime.replace(" ", "\\ "),
                    "--cmd", "let g:mls_inputs = '%s'" % listing.replace("'", "''"),
                    "-c", "syntax on", "-c", "filetype on", "-S", script],
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
    groups = {}
    for path in paths:
        try:
            with open(path + ".groups", encoding="utf-8") as f:
                groups[path] = [l.split(" ") if l else [] for l in f.read().split("\n")]
        except OSError:
            groups[path] = None
    return groups


def vim_scopes_at(groups, lines):
    def scopes_at(line_index, char_index):
        byte = len(lines[line_index][:char_index].encode("utf-8"))
        row = groups[line_index] if line_index < len(groups) else []
        name = row[byte] if byte < len(row) else "-"
        return (VIM_SCOPES[name],) if name in VIM_SCOPES else (name,)
    return scopes_at


def mls_blocks(path):
    """The ```mls fenced blocks of a Markdown file: (first line, text)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if not re.match(r"^```mls(?: verify)?\s*$", lines[i]):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        yield i + 2, "\n".join(lines[i + 1:j]) + "\n"
        i = j + 1


def check_package(root, grammar_path, scope_name):
    problems = []
    folder = os.path.join(root, "tools", "editors", "vscode")
    try:
        with open(os.path.join(folder, "package.json"), encoding="utf-8") as f:
            package = json.load(f)
    except (OSError, ValueError) as e:
        return ["package.json: %s" % e]
    contributes = package.get("contributes", {})
    languages = [l for l in contributes.get("languages", []) if l.get("id") == "mls"]
    if not languages or ".mls" not in languages[0].get("extensions", []):
        problems.append("package.json: no language `mls` for `.mls` files")
    for lang in languages:
        conf = os.path.join(folder, lang.get("configuration", ""))
        try:
            with open(conf, encoding="utf-8") as f:
                if json.load(f).get("comments", {}).get("lineComment") != "#":
                    problems.append("%s: line comments are not `#`" % conf)
        except (OSError, ValueError) as e:
            problems.append("package.json: language configuration: %s" % e)
    grammars = [g for g in contributes.get("grammars", []) if g.get("language") == "mls"]
    if not grammars:
        problems.append("package.json: no grammar for language `mls`")
    for g in grammars:
        path = os.path.normpath(os.path.join(folder, g.get("path", "")))
        if not os.path.isfile(path):
            problems.append("package.json: grammar %s does not exist" % g.get("path"))
        if g.get("scopeName") != scope_name:
            problems.append("package.json: scopeName %r, the grammar's is %r"
                            % (g.get("scopeName"), scope_name))
    main = package.get("main")
    if not main or not os.path.isfile(os.path.join(folder, main)):
        problems.append("package.json: main %r does not exist" % main)
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", required=True)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--grammar", help="the grammar to check (default: the "
                    "one in tools/editors/vscode/syntaxes)")
    ap.add_argument("--vim", help="also check tools/editors/vim with this "
                    "vim, when it is installed")
    args = ap.parse_args()
    root = args.root
    grammar_path = args.grammar or os.path.join(
        root, "tools", "editors", "vscode", "syntaxes", "mls.tmLanguage.json")
    grammar = Grammar(grammar_path)
    problems = list(grammar.errors)
    scope_name = grammar.json.get("scopeName")
    if scope_name != "source.mls":
        problems.append("%s: scopeName is %r, not source.mls" % (grammar_path, scope_name))
    problems += check_package(root, grammar_path, scope_name)
    kinds = keyword_kinds(root)
    if kinds != set(KEYWORD_SCOPES):
        problems.append("grammar/Mls.g4 has keywords %s, KEYWORD_SCOPES %s" % (
            ", ".join(sorted(kinds)), ", ".join(sorted(KEYWORD_SCOPES))))

    inputs = []  # (label, text, first line's number in the label's file)
    for folder in ("examples", "registries", "stdlib", os.path.join("fuzz", "corpus")):
        for path in sorted(glob.glob(os.path.join(root, folder, "**", "*.mls"),
                                     recursive=True)):
            with open(path, encoding="utf-8", errors="replace") as f:
                inputs.append((os.path.relpath(path, root), f.read(), 0))
    for doc in sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
        for first, text in mls_blocks(doc):
            inputs.append((os.path.relpath(doc, root), text, first - 1))
    inputs.append(("<edge cases>", EDGE_CASES, 0))

    checked = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for n, (label, text, offset) in enumerate(inputs):
            paths.append(os.path.join(tmp, "input%d.mls" % n))
            with open(paths[-1], "w", encoding="utf-8") as f:
                f.write(text)
        vim = shutil.which(args.vim) if args.vim else None
        if vim:
            groups = vim_groups(vim, os.path.join(root, "tools", "editors", "vim"),
                                paths, tmp)
        for path, (label, text, offset) in zip(paths, inputs):
            tokens, errors = lex(args.mlsc, path)
            lines = text.split("\n")
            char_scopes = tokenise(grammar, lines)
            problems += check_tokens(label, lines, tokens, errors,
                                     lambda l, c: char_scopes[l][c], offset)
            if vim and groups[path] is None:
                problems.append("%s: vim wrote no syntax groups" % label)
            elif vim and groups[path][:1] and groups[path][0][0] == "filetype":
                problems.append("%s: vim's filetype is not mls" % label)
            elif vim:
                problems += ["vim: " + p for p in check_tokens(
                    label, lines, tokens, errors,
                    vim_scopes_at(groups[path], lines), offset,
                    lambda s: VIM_KEYWORD if s in KEYWORD_SCOPES.values() else s)]
            checked += len(tokens)
            skipped += sum(1 for t in tokens if (t[0], t[1]) in errors)
            if label == "<edge cases>":
                seen = {t[2] for t in tokens}
                for kind in sorted(kinds - seen):
                    problems.append("<edge cases>: no %s token" % kind)
    for p in problems:
        print(p)
    if args.vim:
        print("vim: %s" % ("syntax/mls.vim checked with " + vim if vim else
                           "`%s` not found, syntax/mls.vim not checked" % args.vim))
    print("%d inputs, %d tokens checked, %d skipped at lexical errors, "
          "%d mismatches" % (len(inputs), checked - skipped, skipped, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
