#!/usr/bin/env python3
"""Drives `mlsc lsp` over stdio with real LSP messages and checks each answer.

usage: session.py MLSC WORKDIR
Prints one line per check (`ok: ...`); exits 1 at the first wrong answer.
"""
import json
import os
import subprocess
import sys

mlsc, work = sys.argv[1], sys.argv[2]
proc = subprocess.Popen([mlsc, "lsp"], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE)
next_id = [0]


def send(msg):
    body = json.dumps(msg).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def receive():
    length = None
    while True:
        line = proc.stdout.readline()
        if not line:
            sys.exit("error: the server closed its output")
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(proc.stdout.read(length))


def request(method, params):
    next_id[0] += 1
    send({"jsonrpc": "2.0", "id": next_id[0], "method": method,
          "params": params})
    while True:
        msg = receive()
        if msg.get("id") == next_id[0]:
            return msg
        pending.append(msg)


def notification(method):
    for i, m in enumerate(pending):
        if m.get("method") == method:
            return pending.pop(i)
    while True:
        m = receive()
        if m.get("method") == method:
            return m


def check(cond, what, got=None):
    if not cond:
        sys.exit(f"error: {what}: got {json.dumps(got)[:2000]}")
    print(f"ok: {what}")


pending = []
path = os.path.join(work, "plan.mls")
uri = "file://" + path
broken = "import registries.hardware.nvidia\nlet a = H100_SXM.hbm.capacity + 2 s\n"
good = ("import registries.hardware.nvidia\n"
        "let twice = H100_SXM.hbm.capacity * 2\n"
        "accelerator mine : H100_SXM {\n"
        "  tdp =  500W\n"
        "  \n"
        "}\n"
        "let ratio = H100_SXM.peak.bf16 / H100_SXM.hbm.bandwidth\n"
        "let x = mine.\n")
with open(path, "w") as f:
    f.write(good)

r = request("initialize", {"processId": None, "rootUri": "file://" + work,
                           "capabilities": {}})
caps = r["result"]["capabilities"]
check(caps["hoverProvider"] and caps["definitionProvider"]
      and caps["documentFormattingProvider"] and caps["completionProvider"],
      "initialize announces hover, definition, completion, formatting", caps)
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

# Diagnostics as you type: the same messages and kinds as `mlsc compile`.
send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
    "textDocument": {"uri": uri, "languageId": "mls", "version": 1,
                     "text": broken}}})
d = notification("textDocument/publishDiagnostics")["params"]
check(d["uri"] == uri and len(d["diagnostics"]) >= 1, "a diagnostic for the broken file", d)
g = d["diagnostics"][0]
check(g["code"] == "UnitMismatch" and g["severity"] == 1 and g["source"] == "mlsc",
      "its kind is the code, an error", g)
check(g["range"]["start"]["line"] == 1, "on line 2 (0-based 1)", g)

# The fix clears them; the trailing `mine.` is an error (a path cut short).
text = good.replace("let x = mine.\n", "")
send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
    "textDocument": {"uri": uri, "version": 2},
    "contentChanges": [{"text": text}]}})
d = notification("textDocument/publishDiagnostics")["params"]
check(d["diagnostics"] == [], "no diagnostic once fixed", d)

# Hover on a field reference: dimension, value in display and SI units, origin.
h = request("textDocument/hover", {"textDocument": {"uri": uri},
                                   "position": {"line": 1, "character": 26}})
v = h["result"]["contents"]["value"]
check("H100_SXM.hbm.capacity" in v and "80 GB" in v and "SI: `8.000e+10 B`" in v
      and "from `nvidia_h100_datasheet`" in v and "nvidia.mls" in v,
      "hover on a field reference", v)
# On a let: its derived value.
h = request("textDocument/hover", {"textDocument": {"uri": uri},
                                   "position": {"line": 6, "character": 6}})
v = h["result"]["contents"]["value"]
check("let ratio" in v and "295.2 FLOP/B" in v and "derived" in v, "hover on a let", v)
# On the field an assignment writes, in an entity of the file.
h = request("textDocument/hover", {"textDocument": {"uri": uri},
                                   "position": {"line": 3, "character": 3}})
v = h["result"]["contents"]["value"]
check("mine.tdp" in v and "500 W" in v and "literal" in v, "hover on an assignment", v)

# Go to definition: into the registry, and to a base entity.
r = request("textDocument/definition", {"textDocument": {"uri": uri},
                                        "position": {"line": 1, "character": 14}})
loc = r["result"]
check(loc and loc["uri"].endswith("/registries/hardware/nvidia.mls"),
      "definition of H100_SXM is in the registry", loc)
nvidia = loc["uri"][len("file://"):]
with open(nvidia) as f:
    line = f.read().split("\n")[loc["range"]["start"]["line"]]
check("accelerator H100_SXM" in line, "at its declaration", line)
r = request("textDocument/definition", {"textDocument": {"uri": uri},
                                        "position": {"line": 1, "character": 23}})
with open(nvidia) as f:
    line = f.read().split("\n")[r["result"]["range"]["start"]["line"]]
check("capacity" in line, "definition of .hbm.capacity is its assignment", line)
r = request("textDocument/definition", {"textDocument": {"uri": uri},
                                        "position": {"line": 0, "character": 20}})
check(r["result"]["uri"].endswith("/registries/hardware/nvidia.mls"),
      "definition of an import is the module's file", r["result"])

# Completion: the fields of the entity's kind in its block; after `NAME.`.
r = request("textDocument/completion", {"textDocument": {"uri": uri},
                                        "position": {"line": 4, "character": 2}})
labels = {i["label"] for i in r["result"]}
check({"tdp", "hbm.bandwidth", "peak.bf16"} <= labels, "fields of an accelerator", sorted(labels)[:20])
# In a nested block, the fields under its path.
nested = text.replace("  tdp =  500W\n", "  tdp =  500W\n  hbm {\n    \n  }\n")
send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
    "textDocument": {"uri": uri, "version": 3},
    "contentChanges": [{"text": nested}]}})
notification("textDocument/publishDiagnostics")
r = request("textDocument/completion", {"textDocument": {"uri": uri},
                                        "position": {"line": 5, "character": 4}})
labels = {i["label"] for i in r["result"]}
check({"bandwidth", "capacity"} <= labels and "tdp" not in labels,
      "fields of a nested block", sorted(labels)[:20])
send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
    "textDocument": {"uri": uri, "version": 3},
    "contentChanges": [{"text": text + "let y = H100_SXM.hb\n"}]}})
notification("textDocument/publishDiagnostics")
r = request("textDocument/completion", {"textDocument": {"uri": uri},
                                        "position": {"line": 7, "character": 19}})
labels = {i["label"] for i in r["result"]}
check("hbm.bandwidth" in labels and "tdp" in labels, "after `H100_SXM.`", sorted(labels)[:20])
r = request("textDocument/completion", {"textDocument": {"uri": uri},
                                        "position": {"line": 7, "character": 9}})
labels = {i["label"] for i in r["result"]}
check({"H100_SXM", "twice", "nvidia_h100_datasheet"} <= labels, "names in scope", sorted(labels)[:20])

# An unsaved buffer: definitions in it keep its URI.
u_uri = "untitled:Untitled-1"
send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
    "textDocument": {"uri": u_uri, "languageId": "mls", "version": 1,
                     "text": "let a = 1\nlet b = a\n"}}})
notification("textDocument/publishDiagnostics")
r = request("textDocument/definition", {"textDocument": {"uri": u_uri},
                                        "position": {"line": 1, "character": 8}})
check(r["result"]["uri"] == u_uri and r["result"]["range"]["start"]["line"] == 0,
      "definition in an unsaved buffer", r)

# Formatting: `mlsc fmt` as one edit.
send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
    "textDocument": {"uri": uri, "version": 4},
    "contentChanges": [{"text": text}]}})
notification("textDocument/publishDiagnostics")
r = request("textDocument/formatting", {"textDocument": {"uri": uri},
                                        "options": {"tabSize": 2, "insertSpaces": True}})
edits = r["result"]
fmt = subprocess.run([mlsc, "fmt", "-"], input=text, capture_output=True, text=True).stdout
check(len(edits) == 1 and edits[0]["newText"] == fmt and "  tdp = 500 W\n" in fmt,
      "formatting is mlsc fmt", edits)

# An unknown request is an error; shutdown, then exit with 0.
r = request("textDocument/rename", {"textDocument": {"uri": uri},
                                    "position": {"line": 0, "character": 0}, "newName": "x"})
check(r.get("error", {}).get("code") == -32601, "an unknown method is MethodNotFound", r)
# Malformed params: an error for a request, nothing for a notification, and
# the server goes on.
r = request("textDocument/hover", None)
check(r.get("result", 1) is None or r.get("error", {}).get("code") == -32602,
      "hover with null params is answered", r)
send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": 5}}})
send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"contentChanges": {}}})
r = request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": "x"}})
check("result" in r or "error" in r, "a position of the wrong type is answered", r)

# A document with lone carriage returns: lines as the client counts them,
# and formatting keeps every comment.
cr_uri = "file://" + os.path.join(work, "cr.mls")
send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
    "textDocument": {"uri": cr_uri, "languageId": "mls", "version": 1,
                     "text": "let a = 1 # first\rlet b = 2 # second\rlet c = 1 GB + 1 s\r"}}})
d = notification("textDocument/publishDiagnostics")["params"]
check(d["uri"] == cr_uri and d["diagnostics"][0]["range"]["start"]["line"] == 2,
      "lone CR documents: the error is on line 3", d)
r = request("textDocument/formatting", {"textDocument": {"uri": cr_uri}, "options": {}})
check(r["result"][0]["newText"].endswith("let c = 1 GB + 1 s\n"),
      "a document that parses is formatted, even with a unit error", r)
send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
    "textDocument": {"uri": cr_uri, "version": 2},
    "contentChanges": [{"text": "let a = 1 # first\rlet b = 2 # second\r"}]}})
notification("textDocument/publishDiagnostics")
r = request("textDocument/formatting", {"textDocument": {"uri": cr_uri}, "options": {}})
check(r["result"][0]["newText"] == "let a = 1  # first\nlet b = 2  # second\n",
      "formatting a lone-CR document keeps both comments", r)

# A let named like a scenario value: its own value.
send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
    "textDocument": {"uri": uri, "version": 5},
    "contentChanges": [{"text": text}]}})
notification("textDocument/publishDiagnostics")

r = request("shutdown", None)
check("result" in r and r["result"] is None, "shutdown", r)
send({"jsonrpc": "2.0", "method": "exit"})
check(proc.wait(timeout=10) == 0, "exit after shutdown exits 0", proc.returncode)
