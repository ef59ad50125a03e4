"""User text escaped once, at the writer, for each output format: the terminal, Markdown and
LaTeX.

User text is anything factres did not write itself: entity names and fact lines from a
haystack, questions, predictions, system and folder names, paths. Every writer that puts such
text into an output passes it through the one function of its format, once, at the place it
writes; the text is never stored escaped.

- `terminal`: control characters (C0 and C1, DEL, NUL, BEL, ESC and so every ANSI sequence),
  the Unicode line and paragraph separators (U+2028, U+2029) and the bidirectional controls
  are shown as visible escapes (`\\x07`, `\\x1b`, `\\u2028`, `\\n`), so a name can neither
  ring the bell, recolour the terminal, reorder a line nor break one; so are the invisible
  format characters (zero-width space and joiners, word joiner, soft hyphen, a BOM inside the
  text), so two names that print alike but differ are told apart.
- `markdown`: a GitHub table cell or an HTML comment: the same visible escapes, then the
  backslash, `|` (a cell boundary), `<` and `>` (HTML, so `-->` cannot close a comment),
  `*`, `` ` `` and `~` (emphasis, code, strike), `[`, `]` and `!` (so `[text](url)`,
  `[text][ref]` and `![alt](src)` in a name are never a live link or image; a `(` right after
  a `]` is escaped too, for renderers that would still pair it) and factres's own table marks
  `§ ¶ † ‡ ↑ ↓` (shown as `\\§`, so a name holding one is never read as the mark).
- `latex`: text mode for pdflatex, lualatex or xelatex: the visible escapes (a control
  character would stop TeX, a line break inside a `%` comment would make the next line live
  LaTeX), every special character (`\\ & % $ # _ { } ~ ^`), the marks `§ ¶ † ‡` as escaped text
  (not as factres's superscript marks), the arrows `↑ ↓` as arrows in line (pdflatex's fonts
  lack the characters; the marks are superscripts) and the dashes factres writes; everything
  else stays UTF-8. (A row of a tabular that opens with `[` is the table writer's to guard:
  `tables.latex_table`.)
  `latex_comment` is for text inside a `%` comment, where only line breaks and control
  characters matter.
- `shell`: one word of a command factres suggests (`factres explain RUN QID ...`): quoted for a
  POSIX shell, or in bash's `$'...'` quoting when it holds a hidden character.
- `plot`: a matplotlib label (`factres tables --plot`): the visible escapes, and `$` escaped
  (two would start mathtext, one unbalanced stops the drawing).
- `readout`: a field of a readout line (`Memory.readout`, docs/readout.md): the backslash
  doubled first, then the visible escapes (so a written "\\n" and a line break differ: `\\\\n`
  and `\\n`), then `|` and `=` as `\\|` and `\\=` (the line's own separators), so a line is
  one line and splits one way.

Only the visible escapes are shared; nothing here knows about tables or runs, so every stage
may import it."""
from __future__ import annotations

import re

# What a terminal, a Markdown file or TeX would act on instead of showing: C0 and C1 control
# characters (NUL, BEL, ESC, DEL, ...), the line and paragraph separators, the bidirectional
# marks, embeddings, overrides and isolates.
HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e"
                    "\u2066-\u2069"
                    # invisible format characters: a name holding one prints as another name
                    # ("Fr\u200bance" as "France"): zero-width space, joiners, word joiner,
                    # invisible operators, soft hyphen, Mongolian vowel separator, BOM
                    "\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _code(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    point = ord(ch)
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def visible(text: str) -> str:
    """`text` with every hidden character (`HIDDEN`) as a Python-style escape: "\\x07",
    "\\u2028", "\\n". A backslash of the text itself is kept as it is."""
    if HIDDEN.search(text) is None:
        return text
    return HIDDEN.sub(lambda m: _code(m[0]), text)


def terminal(text: str, *, lines: bool = False) -> str:
    """`text` safe to print: every hidden character visible. With `lines`, the line breaks of
    a message factres composed of several lines are kept (each line is escaped on its own)."""
    if lines:
        return "\n".join(visible(line) for line in str(text).split("\n"))
    return visible(str(text))


# ---- Markdown -------------------------------------------------------------------------------
# factres's own marks in its tables (paper_tables: †, ‡, §, ¶, ↑, ↓): a user's copy is shown
# escaped.
MARKS = "§¶†‡↑↓"
_MARKDOWN = {"\\": "\\\\", "|": "\\|", "<": "&lt;", ">": "&gt;", "*": "\\*",
             "`": "\\`", "~": "\\~",
             # a link or an image: `[text](url)`, `[text][ref]`, `![alt](src)` (audit C32, V11)
             "[": "\\[", "]": "\\]", "!": "\\!", "](": "\\]\\(",
             **{m: "\\" + m for m in MARKS}}
# "](" first: the "(" that would complete a link is escaped with its "]"
_MARKDOWN_SPECIAL = re.compile(r"\]\(|[" + re.escape("".join(k for k in _MARKDOWN
                                                          if len(k) == 1)) + "]")


def markdown(text: str) -> str:
    """`text` for a GitHub Markdown table cell or an HTML comment (see the module docstring)."""
    text = visible(str(text))
    return _MARKDOWN_SPECIAL.sub(lambda m: _MARKDOWN[m[0]], text)


# ---- LaTeX ----------------------------------------------------------------------------------
_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
          "^": r"\textasciicircum{}", "—": "---", "–": "--",
          # factres's marks are superscripts it adds itself (tables.latex_table); the same
          # characters in a name are set as escaped text, as Markdown shows them
          "§": r"\textbackslash{}\S{}", "†": r"\textbackslash{}\dag{}",
          "‡": r"\textbackslash{}\ddag{}", "¶": r"\textbackslash{}\P{}",
          # arrows set as arrows, in line (factres's significance marks are superscripts)
          "↑": r"\ensuremath{\uparrow}", "↓": r"\ensuremath{\downarrow}"}
_LATEX_SPECIAL = re.compile("[" + re.escape("".join(_LATEX)) + "]")


def latex(text: str) -> str:
    """`text` for LaTeX text mode (see the module docstring)."""
    text = visible(str(text))
    return _LATEX_SPECIAL.sub(lambda m: _LATEX[m[0]], text)


def plot(text: str) -> str:
    """`text` for a matplotlib label (see the module docstring)."""
    return visible(str(text)).replace("$", r"\$")


_READOUT = {"|": "\\|", "=": "\\="}
_READOUT_SPECIAL = re.compile(r"[|=]")


def readout(text: str) -> str:
    """`text` for a field of a readout line (see the module docstring)."""
    text = visible(str(text).replace("\\", "\\\\"))
    return _READOUT_SPECIAL.sub(lambda m: _READOUT[m[0]], text)


def shell(text: str) -> str:
    """`text` as one word of a shell command factres suggests: `shlex.quote`d (POSIX), or, when
    it holds a character `visible` would escape (a control or bidirectional character, which a
    terminal would act on rather than show), in bash's `$'...'` quoting with that character as
    its escape, so that the word is shown and pasted as what it is."""
    import shlex
    if HIDDEN.search(text) is None:
        return shlex.quote(text)
    out = []
    for ch in text:
        if ch in "\\'":
            out.append("\\" + ch)
        elif HIDDEN.match(ch):
            out.append(_code(ch))
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def latex_comment(text: str) -> str:
    """`text` for the rest of a `%` comment line: only what could end the line (a line break,
    U+2028) or stop TeX (a control character) is changed, to its visible escape."""
    return visible(str(text))
