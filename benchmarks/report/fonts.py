"""The font stacks of every page tokbench writes (report.html, the token explorer, ``tokbench explore``).

Each stack names fonts that hold Hangul and the other CJK scripts before its generic family, so a page shows
Korean text as glyphs, not boxes, wherever one of them is installed: Noto Sans CJK (Debian's
``fonts-noto-cjk``, most Linux desktops), Noto Sans KR (Google Fonts), Apple SD Gothic Neo (macOS, iOS), Malgun
Gothic (Windows), NanumGothic (older Korean systems).  A browser falls back glyph by glyph along the stack, so
the Latin text keeps the first font that has it.
"""

from __future__ import annotations

#: the Hangul-capable fonts, in the order a browser tries them
CJK_FONTS = '"Noto Sans CJK KR", "Noto Sans KR", "Apple SD Gothic Neo", "Malgun Gothic", "NanumGothic"'
#: running text
SANS_SERIF = f'system-ui, -apple-system, "Segoe UI", {CJK_FONTS}, sans-serif'
#: pieces, code and ids: a monospace font first, the CJK fonts for the characters it lacks
MONOSPACE = f'ui-monospace, "DejaVu Sans Mono", "Noto Sans Mono CJK KR", {CJK_FONTS}, monospace'
