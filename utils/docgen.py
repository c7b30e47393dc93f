"""Shared by the doc generators: rewrite the generated sections of a file.

A section is the text between `<!-- BEGIN GENERATED: NAME -->` and
`<!-- END GENERATED: NAME -->`; the markers stay, the text between them is
replaced by the generator's output followed by a newline.
"""
import re


def section(name):
    return re.compile(r"(<!-- BEGIN GENERATED: %s -->\n).*?(<!-- END GENERATED: %s -->)"
                      % (re.escape(name), re.escape(name)), re.S)


def update_sections(path, generators, check, regenerate):
    """Rewrites the sections of `path` from `generators` ({name: () -> text}).

    With `check`, writes nothing and returns 1 when some section is stale,
    printing how to `regenerate`. Returns 0 when current or rewritten, and 1
    when a section's markers are missing.
    """
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = text
    for name, gen in generators.items():
        pattern = section(name)
        if not pattern.search(new):
            print("error: %s: no GENERATED section `%s`" % (path, name))
            return 1
        body = gen().rstrip("\n") + "\n"
        new = pattern.sub(lambda m: m.group(1) + body + m.group(2), new)
    if new == text:
        return 0
    if check:
        print("error: %s is stale; run %s" % (path, regenerate))
        return 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    return 0
