#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""No function longer than a limit (120 lines, from its signature to its closing brace).

Reads the C++/CUDA sources and the HTML report's script of src/, collectives/, workloads/ and
analysis/, and the tests' sources under tests/ (its data/ apart: samples, not tests), or the files
given, and lists each function over the limit as FILE:LINE, its name and length; exits 1 if there
is one that KNOWN_EXCEPTIONS does not name. A test's body is a function too, named Suite.Name.

The scan matches braces, with comments, strings, character literals and preprocessor lines taken
out first; it relies on the code being clang-format'ed (a function's body opens on the line of its
signature or the next). In C++ a brace opens a function's body when it stands at namespace or
class scope and what precedes it since the last statement ends in `)`, a qualifier (const,
noexcept, override, final, mutable), a trailing return type, or a constructor's initializer list;
lambdas and local classes count toward the function they are in. In JavaScript every named
`function NAME(...) {` counts (nested ones apart; anonymous callbacks toward their function).

Usage: check-function-length.py [--limit N] [--root DIR] [FILE...]
"""
import argparse
import os
import re
import sys

LIMIT = 120
TOPS = ("src", "collectives", "workloads", "analysis", "tests")
SKIPPED = (os.path.join("tests", "data"),)  # sample inputs, such as this check's own
GTEST_MACROS = ("TEST", "TEST_F", "TEST_P", "TYPED_TEST", "TYPED_TEST_P")
EXTENSIONS = (".cpp", ".hpp", ".cu", ".cuh", ".js")

# Functions another change is splitting: "path:name" → why it may still be long. Keep this short:
# an entry whose function is no longer over the limit fails the check until it is removed.
KNOWN_EXCEPTIONS = {}

CPP_QUALIFIERS = ("const", "noexcept", "override", "final", "mutable", "try")
CPP_SCOPES = re.compile(r"\b(namespace|class|struct|union|enum|extern)\b")
CPP_CONTROL = re.compile(r"^(if|for|while|switch|catch|do|else|return)\b")
ACCESS = re.compile(r"^(public|private|protected)\s*:(?!:)\s*")


def blank_code(text, js):
    """`text` with comments, string and character literals (and in C++ preprocessor lines)
    replaced by spaces, newlines kept, so that offsets and line numbers stay those of the file."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
            continue
        if line_start and not js and c == "#":
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            blank(i, j)
            i = j
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif not js and c == "R" and text.startswith('"', i + 1) and not (
                i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            j = text.find(")" + delim + '"', open_paren)
            j = n if j < 0 else j + len(delim) + 2
            blank(i, j)
            i = j
        elif c in "\"'" or (js and c == "`"):
            if not js and c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and \
                    text[i + 1].isalnum() and text[i - 1] not in "uUL8":
                i += 1  # a digit separator: 1'000'000
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            blank(i, min(j + 1, n))
            i = j + 1
        elif js and c == "/" and re.match(r"[=(,:!&|?{};\s]", _prev_nonspace(text, i)):
            # A regular expression literal (after an operator, not after a value).
            j = i + 1
            while j < n and text[j] not in "/\n":
                j += 2 if text[j] == "\\" else 1
            blank(i, min(j + 1, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def _prev_nonspace(text, i):
    k = i - 1
    while k >= 0 and text[k] in " \t":
        k -= 1
    return text[k] if k >= 0 else "\n"


def is_cpp_function_head(head):
    head = ACCESS.sub("", head.strip())
    if "(" not in head or CPP_CONTROL.match(head):
        return False
    depth = 0
    for c in head:  # an `=` outside parentheses makes it an initializer (`= [] {`, `= {`)
        depth += c in "(<"
        depth -= c in ")>"
        if depth == 0 and c == "=" and "operator" not in head:
            return False
    if head.endswith(")") or head.endswith("}"):
        return True
    if re.search(r"\)\s*(->\s*[\w:<>,\s*&]+)$", head):
        return True
    return head.split()[-1] in CPP_QUALIFIERS


def function_name(head):
    before = head[:head.find("(")] if "(" in head else head
    words = re.findall(r"[\w:~]+|operator\S*", before)
    name = words[-1] if words else "?"
    if name in GTEST_MACROS:  # TEST(Suite, Name) is named Suite.Name, as gtest prints it
        args = re.match(r"[^(]*\(\s*(\w+)\s*,\s*(\w+)", head)
        return "%s.%s" % args.groups() if args else name
    return name


def cpp_functions(code):
    """(name, first line, last line) of every function body at namespace or class scope."""
    found = []
    scopes = []  # each open brace: "ns", "fn" or "init"
    head_start = 0  # where the statement being read at namespace/class scope began
    fn_open = None
    for i, c in enumerate(code):
        if c not in "{};":
            continue
        classifying = all(s == "ns" for s in scopes)
        if c == ";":
            if classifying:
                head_start = i + 1
            continue
        if c == "{":
            if not classifying:
                scopes.append("init")
                continue
            head = code[head_start:i]
            flat = " ".join(head.split())
            if CPP_SCOPES.search(flat) and "(" not in flat.split("{")[0]:
                scopes.append("ns")
                head_start = i + 1
            elif is_cpp_function_head(_collapse_groups(flat)):
                scopes.append("fn")
                start = head_start + len(head) - len(head.lstrip())
                start += len(ACCESS.match(code[start:]).group(0)) if ACCESS.match(
                    code[start:]) else 0
                fn_open = (function_name(_collapse_groups(flat)), start)
            else:
                scopes.append("init")
            continue
        # c == "}"
        kind = scopes.pop() if scopes else "ns"
        if kind == "fn" and all(s == "ns" for s in scopes):
            name, start = fn_open
            found.append((name, code.count("\n", 0, start) + 1, code.count("\n", 0, i) + 1))
        if all(s == "ns" for s in scopes) and kind != "init":
            head_start = i + 1
    return found


def _collapse_groups(flat):
    """Nested brace groups in a statement (initializers in a constructor's list) as `{}`."""
    out, depth = [], 0
    for c in flat:
        if c == "{":
            if depth == 0:
                out.append("{}")
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out).strip()


JS_FUNCTION = re.compile(r"\bfunction\s+([\w$]+)\s*\([^()]*\)\s*$")


def js_functions(code):
    found = []
    stack = []  # per open brace: (name, start offset) of a named function, or None
    last = 0
    for i, c in enumerate(code):
        if c == "{":
            m = JS_FUNCTION.search(code[max(last, i - 400):i])
            if m:
                stack.append((m.group(1), max(last, i - 400) + m.start()))
            else:
                stack.append(None)
        elif c == "}":
            top = stack.pop() if stack else None
            if top:
                found.append((top[0], code.count("\n", 0, top[1]) + 1,
                              code.count("\n", 0, i) + 1))
        if c in "{};":
            last = i + 1
    return found


def product_files(root):
    for top in TOPS:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            if os.path.relpath(folder, root) in SKIPPED:
                dirs[:] = []
                continue
            dirs.sort()
            for f in sorted(files):
                if f.endswith(EXTENSIONS):
                    yield os.path.relpath(os.path.join(folder, f), root)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=LIMIT)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    files = args.files or list(product_files(root))
    failed, functions, excepted, used = [], 0, [], set()
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        js = rel.endswith(".js")
        code = blank_code(text, js)
        for name, first, last in (js_functions(code) if js else cpp_functions(code)):
            functions += 1
            lines = last - first + 1
            if lines <= args.limit:
                continue
            line = "%s:%d: %s is %d lines (limit %d)" % (rel, first, name, lines, args.limit)
            key = "%s:%s" % (rel, name)
            if key in KNOWN_EXCEPTIONS:
                used.add(key)
                excepted.append(line + ", known: " + KNOWN_EXCEPTIONS[key])
            else:
                failed.append(line)
    for line in excepted:
        print(line)
    for line in failed:
        print(line)
    stale = sorted(set(KNOWN_EXCEPTIONS) - used) if not args.files else []
    for key in stale:
        print("%s: a known exception no longer over %d lines: remove it from KNOWN_EXCEPTIONS" %
              (key, args.limit))
    print("%d functions in %d files; %d over %d lines, %d of them known exceptions" %
          (functions, len(files), len(failed) + len(excepted), args.limit, len(excepted)))
    if functions == 0:
        print("check-function-length.py: no function found: the scan is broken")
        return 1
    if stale:
        return 1
    if failed:
        print("check-function-length.py: split them at their seams (or, while another change "
              "splits one, name it in KNOWN_EXCEPTIONS)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
