"""XSS vectors for everything untrusted that forge renders, and an HTML checker to judge output.

The HTML vectors follow the categories of the OWASP "XSS Filter Evasion Cheat Sheet"
(cheatsheetseries.owasp.org/cheatsheets/XSS_Filter_Evasion_Cheat_Sheet.html), one or more
per category, plus mutation-XSS vectors of the kind found against DOMPurify (namespace
confusion through <math>/<svg>/<noscript>/<style>). The Markdown vectors are link, image,
autolink and reference-definition spellings: every container a definition can sit in, entity and
escape encodings, case, whitespace and control characters inside the scheme.

``check_html`` parses an output with a real HTML parser and fails on any tag, attribute, URL or
style outside what a record may contain — it does not trust substring matching.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

B64_SCRIPT = "PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="  # <script>alert(1)</script>
B64_SVG = ("PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIG9ubG9hZD0iYWxlcnQoMSkiLz4=")

# (category, vector) — raw HTML, as a model (or a tool's output) might write it.
HTML_VECTORS: list[tuple[str, str]] = [
    ("basic", "<SCRIPT SRC=https://xss.example/xss.js></SCRIPT>"),
    ("basic", "<script>alert(1)</script>"),
    ("polyglot", "javascript:/*--></title></style></textarea></script></xmp>"
                 "<svg/onload='+/\"/+/onmouseover=1/+/[*/[]/+alert(1)//'>"),
    ("malformed a", '\\<a onmouseover="alert(document.cookie)"\\>xxs link\\</a\\>'),
    ("malformed img", '<IMG """><SCRIPT>alert("XSS")</SCRIPT>"\\>'),
    ("fromCharCode", "<IMG SRC=javascript:alert(String.fromCharCode(88,83,83))>"),
    ("default src", "<IMG SRC=# onmouseover=\"alert('xxs')\">"),
    ("empty src", "<IMG SRC= onmouseover=\"alert('xxs')\">"),
    ("no src", "<IMG onmouseover=\"alert('xxs')\">"),
    ("onerror", '<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>'),
    ("onerror encoded", '<img src=x onerror="&#0000106&#0000097&#0000118&#0000097&#0000115'
                        '&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097">'),
    ("decimal refs", "<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;"
                     "&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>"),
    ("decimal no semicolon", "<IMG SRC=&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099"
                             "&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108>"),
    ("hex no semicolon", "<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A"
                         "&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>"),
    ("embedded tab", "<IMG SRC=\"jav\tascript:alert('XSS');\">"),
    ("encoded tab", "<IMG SRC=\"jav&#x09;ascript:alert('XSS');\">"),
    ("encoded newline", "<IMG SRC=\"jav&#x0A;ascript:alert('XSS');\">"),
    ("encoded cr", "<IMG SRC=\"jav&#x0D;ascript:alert('XSS');\">"),
    ("null byte", '<IMG SRC=java\0script:alert("XSS")>'),
    ("meta chars before", "<IMG SRC=\" &#14;  javascript:alert('XSS');\">"),
    ("non-alpha-non-digit", '<SCRIPT/XSS SRC="https://xss.example/xss.js"></SCRIPT>'),
    ("non-alpha-non-digit", '<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^`=alert("XSS")>'),
    ("extraneous brackets", '<<SCRIPT>alert("XSS");//\\<</SCRIPT>'),
    ("no closing script", "<SCRIPT SRC=https://xss.example/xss.js?< B >"),
    ("protocol resolution", "<SCRIPT SRC=//xss.example/.j>"),
    ("half open", "<IMG SRC=\"`<javascript:alert>`('XSS')\""),
    ("double open", "<iframe src=https://xss.example/scriptlet.html <"),
    ("end title", '</TITLE><SCRIPT>alert("XSS");</SCRIPT>'),
    ("input image", "<INPUT TYPE=\"IMAGE\" SRC=\"javascript:alert('XSS');\">"),
    ("body background", "<BODY BACKGROUND=\"javascript:alert('XSS')\">"),
    ("img dynsrc lowsrc", "<IMG DYNSRC=\"javascript:alert('XSS')\"><IMG LOWSRC=\"javascript:alert(1)\">"),
    ("list-style-image", "<STYLE>li {list-style-image: url(\"javascript:alert('XSS')\");}</STYLE>"
                         "<UL><LI>XSS</br>"),
    ("vbscript", "<IMG SRC='vbscript:msgbox(\"XSS\")'>"),
    ("svg onload", "<svg/onload=alert('XSS')>"),
    ("svg onload", '<svg onload="alert(1)"></svg>'),
    ("body onload", "<BODY ONLOAD=alert('XSS')>"),
    ("link stylesheet", "<LINK REL=\"stylesheet\" HREF=\"javascript:alert('XSS');\">"),
    ("meta refresh", "<META HTTP-EQUIV=\"refresh\" CONTENT=\"0;url=javascript:alert('XSS');\">"),
    ("meta refresh data", f'<META HTTP-EQUIV="refresh" CONTENT="0;url=data:text/html;base64,{B64_SCRIPT}">'),
    ("iframe", "<IFRAME SRC=\"javascript:alert('XSS');\"></IFRAME>"),
    ("iframe event", '<IFRAME SRC=# onmouseover="alert(document.cookie)"></IFRAME>'),
    ("iframe srcdoc", '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>'),
    ("frameset", "<FRAMESET><FRAME SRC=\"javascript:alert('XSS');\"></FRAMESET>"),
    ("table background", "<TABLE BACKGROUND=\"javascript:alert('XSS')\"><TD BACKGROUND=\"javascript:alert(1)\">"),
    ("div background", "<DIV STYLE=\"background-image: url(javascript:alert('XSS'))\">x</DIV>"),
    ("div expression", "<DIV STYLE=\"width: expression(alert('XSS'));\">x</DIV>"),
    ("style attribute", '<p style="position:fixed;top:0;left:0;width:100%;height:100%">cover</p>'),
    ("downlevel-hidden", "<!--[if gte IE 4]><SCRIPT>alert('XSS');</SCRIPT><![endif]-->"),
    ("base", "<BASE HREF=\"javascript:alert('XSS');//\">"),
    ("object", '<OBJECT TYPE="text/x-scriptlet" DATA="https://xss.example/scriptlet.html"></OBJECT>'),
    ("object data", '<object data="javascript:alert(1)"></object>'),
    ("embed svg", f'<EMBED SRC="data:image/svg+xml;base64,{B64_SVG}" type="image/svg+xml" '
                  'AllowScriptAccess="always"></EMBED>'),
    ("xml island", "<XML ID=\"xss\"><I><B><IMG SRC=\"javas<!-- -->cript:alert('XSS')\"></B></I></XML>"),
    ("html+time", '<HTML><BODY><?xml:namespace prefix="t" ns="urn:schemas-microsoft-com:time">'
                  '<?import namespace="t" implementation="#default#time2"><t:set attributeName='
                  '"innerHTML" to="XSS<SCRIPT DEFER>alert(&quot;XSS&quot;)</SCRIPT>"></BODY></HTML>'),
    ("few characters", '<SCRIPT>document.write("<SCRI");</SCRIPT>PT SRC="https://xss.example/xss.js"></SCRIPT>'),
    ("anchor javascript", "<A HREF=\"javascript:document.location='https://xss.example/'\">XSS</A>"),
    ("anchor entities", '<a href="jAvAsCrIpT&colon;alert&lpar;1&rpar;">X</a>'),
    ("anchor hex entity", '<a href="&#x6A;avascript:alert(1)">X</a>'),
    ("anchor data", f'<a href="data:text/html;base64,{B64_SCRIPT}">X</a>'),
    ("anchor file", '<a href="file:///etc/passwd">X</a>'),
    ("form action", '<form action="javascript:alert(1)"><button formaction="javascript:alert(2)">x</button></form>'),
    ("srcset", '<img srcset="javascript:alert(1)" src="x">'),
    ("details ontoggle", "<details open ontoggle=alert(1)><summary>s</summary></details>"),
    ("svg xlink", '<svg><a xlink:href="javascript:alert(1)"><text x="20" y="20">X</text></a></svg>'),
    ("math href", '<math href="javascript:alert(1)">CLICK</math>'),
    ("mxss noscript", '<noscript><p title="</noscript><img src=x onerror=alert(1)>">'),
    ("mxss math style", '<math><mtext><table><mglyph><style><!--</style><img title="--&gt;'
                        '&lt;/mglyph&gt;&lt;img&Tab;src=1&Tab;onerror=alert(1)&gt;">'),
    ("mxss svg style", '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">'),
    ("mxss form math", "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>"),
    ("comment", "<!--<img src=x onerror=alert(1)>-->"),
    ("comment bang", "<!-- --!><img src=x onerror=alert(1)> -->"),
    ("unclosed img", "<img src=x onerror=alert(1)//"),
    ("unclosed anchor", '<a href="javascript:alert(1)"'),
    ("unclosed script", "<script>alert(1)"),
    ("class borrowing", '<div class="forge-record jp-Dialog">borrowed classes</div>'),
    ("id clobbering", '<img name="getElementById"><a id="location" href="https://x">x</a>'),
]

# Markdown that should produce no live link, image or tag with a dangerous target.
MARKDOWN_VECTORS: list[tuple[str, str]] = [
    ("inline link", "[x](javascript:alert(1))"),
    ("mixed case", "[x](JaVaScRiPt:alert(1))"),
    ("decimal entity", "[x](&#106;avascript:alert(1))"),
    ("hex entity", "[x](&#x6A;avascript:alert(1))"),
    ("named colon", "[x](javascript&colon;alert(1))"),
    ("entity tab", "[x](java&#9;script:alert(1))"),
    ("entity newline", "[x](java&#10;script:alert(1))"),
    ("backslash escape", "[x](javascript\\:alert(1))"),
    ("angle destination", "[x](<javascript:alert(1)>)"),
    ("angle with tab", "[x](<java\tscript:alert(1)>)"),
    ("angle with space", "[x](< javascript:alert(1)>)"),
    ("leading newline", "[x](\njavascript:alert(1))"),
    ("padding", "[x](   javascript:alert(1)   )"),
    ("with title", '[x](javascript:alert(1) "title")'),
    ("comment trick", "[x](javascript://%0Aalert(1))"),
    ("vbscript", "[x](vbscript:msgbox(1))"),
    ("data html", f"[x](data:text/html;base64,{B64_SCRIPT})"),
    ("data html plain", "[x](data:text/html,<script>alert(1)</script>)"),
    ("data image as link", "[x](data:image/png;base64,iVBORw0KGgo=)"),
    ("file", "[x](file:///etc/passwd)"),
    ("image javascript", "![x](javascript:alert(1))"),
    ("image svg data", f"![x](data:image/svg+xml;base64,{B64_SVG})"),
    ("image html data", f"![x](data:text/html;base64,{B64_SCRIPT})"),
    ("autolink", "<javascript:alert(1)>"),
    ("autolink case", "<JaVaScRiPt:alert(1)>"),
    ("autolink data", "<data:text/html,hi>"),
    ("autolink vbscript", "<vbscript:msgbox(1)>"),
    ("reference", "[x]\n\n[x]: javascript:alert(1)"),
    ("reference in blockquote", "> [x]: javascript:alert(1)\n\n[x]"),
    ("reference in list item", "- [x]: javascript:alert(1)\n\n[x]"),
    ("reference in ordered item", '1. [x]: javascript:alert(1) "t"\n\n[x][]'),
    ("reference nested", "> - > [x]: <javascript:alert(1)>\n\n[x]"),
    ("reference angle", "[x]: <javascript:alert(1)>\n\n[y][x]"),
    ("reference entity", "[x]: &#106;avascript:alert(1)\n\n[x]"),
    ("reference case image", "[x]: JaVaScRiPt:alert(1)\n\n![x]"),
    ("reference next line", "[x]:\n  javascript:alert(1)\n\n[x]"),
    ("reference data", f"> > [d]: data:text/html;base64,{B64_SCRIPT}\n\n[d]"),
    ("reference vbscript", "* [v]: vbscript:msgbox(1)\n\n[v]"),
    ("link in table", "| a |\n|---|\n| [x](javascript:alert(1)) |"),
    ("link in heading", "# [x](javascript:alert(1))"),
    ("link in emphasis", "**[x](javascript:alert(1))**"),
    ("html label", "[<img src=x onerror=alert(1)>](https://example.com)"),
    ("title breakout", '[x](https://example.com "a\\" onmouseover=\\"alert(1)")'),
    ("math quote breakout", '[a](https://example.com/$"onmouseover=alert(1)//$)'),
    ("html block", "<div>\n<script>alert(1)</script>\n</div>"),
    ("html block line", "<img src=x onerror=alert(1)>"),
    ("escaped tag", "\\<img src=x onerror=alert(1)>"),
    ("html after fence", "<b>\n```\n<img src=x onerror=alert(1)>\n```"),
    ("table splits span", "| `x | <img src=x onerror=alert(1)> ` |\n|---|"),
    ("heading ends span", "`code\n# <img src=x onerror=alert(1)> `"),
    ("mermaid fence", "```mermaid\ngraph TD; A-->B; click A \"javascript:alert(1)\"\n```"),
    ("tex href", "$\\href{javascript:alert(1)}{x}$ and $$\\href{javascript:alert(2)}{y}$$"),
    ("deep nesting", "> " * 200 + "[x](javascript:alert(1))"),
]

ALL_VECTORS = HTML_VECTORS + MARKDOWN_VECTORS

# ---------------------------------------------------------------------- judging the output

# What a record may contain, written down independently of forge_jupyter.render's own policy.
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title", "target", "rel"}, "img": {"src", "alt", "title"},
    "ol": {"start"}, "th": {"style"}, "td": {"style"}, "details": {"open", "class", "style"},
    # The record's frame: the live widget's classes, their looks inline, the tool card's state.
    "div": {"class", "style", "data-state", "data-tool", "data-status"},
    "span": {"class", "style", "title"}, "strong": {"class", "style"}, "pre": {"class", "style"},
}
# Layout and colour only: nothing that loads (url), positions over the page, or runs.
FRAME_PROPERTIES = {
    "align-items", "background-color", "border", "border-left", "border-left-color",
    "border-radius", "color", "display", "flex", "font-family", "font-size", "font-style",
    "font-weight", "gap", "line-height", "margin", "margin-bottom", "margin-left", "margin-top",
    "min-height", "min-width", "overflow", "overflow-wrap", "padding", "padding-bottom",
    "padding-left", "padding-top", "text-align",
    "text-overflow", "white-space",
}
ALLOWED_TAGS = set(ALLOWED_ATTRIBUTES) | {
    "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "dl", "dt", "em", "h1", "h2",
    "h3", "h4", "h5", "h6", "hr", "i", "ins", "kbd", "li", "mark", "p", "pre", "q", "s", "samp",
    "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "tfoot", "thead", "tr",
    "u", "ul", "var",
}
NEVER = {"script", "iframe", "object", "embed", "style", "svg", "math", "form", "input", "button",
         "base", "link", "meta", "frame", "frameset", "noscript", "template", "xml"}
SAFE_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*\Z")


def scheme_of(url: str) -> str | None:
    """Stricter than a browser: every whitespace and control character anywhere is dropped."""
    squeezed = "".join(ch for ch in url if ord(ch) > 0x20 and not ch.isspace()).lower()
    m = re.match(r"([a-z][a-z0-9+.\-]*):", squeezed)
    return m.group(1) if m else None


class Tree(HTMLParser):
    """Elements (tag, attributes) and text of an HTML fragment, as a parser reads them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.texts: list[str] = []
        self.other: list[str] = []  # comments, declarations, processing instructions
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, attrs))

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    def handle_comment(self, data: str) -> None:
        self.other.append(f"<!--{data}-->")

    def handle_decl(self, decl: str) -> None:
        self.other.append(decl)

    def handle_pi(self, data: str) -> None:
        self.other.append(data)

    def unknown_decl(self, data: str) -> None:
        self.other.append(data)

    @property
    def text(self) -> str:
        return "".join(self.texts)

    def hrefs(self) -> list[str]:
        return [v or "" for t, attrs in self.elements for k, v in attrs if k == "href"]


def check_html(html: str) -> Tree:
    """Fail unless ``html`` holds only record-safe tags, attributes, URLs and styles."""
    tree = Tree(html)
    assert not tree.other, f"comment or declaration survived: {tree.other}"
    for tag, attrs in tree.elements:
        assert tag not in NEVER, f"<{tag}> in {html!r}"
        assert tag in ALLOWED_TAGS, f"unexpected <{tag}> in {html!r}"
        for name, value in attrs:
            value = value or ""
            assert not name.startswith("on"), f"event handler {name}= on <{tag}>"
            assert name in ALLOWED_ATTRIBUTES.get(tag, set()), f"{name}= on <{tag}> in {html!r}"
            if name == "href":
                assert scheme_of(value) in (None, "http", "https", "mailto"), f"href={value!r}"
            if name == "src":
                assert SAFE_IMAGE.match(value), f"<{tag} src={value!r}>: only inline raster images"
            if name == "style" and tag in ("th", "td"):
                assert re.fullmatch(r"text-align:(left|right|center)", value), f"style={value!r}"
            elif name == "style":
                for decl in filter(None, value.split(";")):
                    prop, _, said = decl.partition(":")
                    assert prop.strip() in FRAME_PROPERTIES, f"style={value!r} on <{tag}>"
                    assert not re.search(r"url\(|expression|\\|@|<|javascript", said, re.I), value
            if name == "class":
                assert all(re.fullmatch(r"forge-[a-z-]+", c) for c in value.split()), f"class={value!r}"
            if name == "target":
                assert value == "_blank"
            if name == "rel":
                assert set(value.split()) >= {"noopener", "noreferrer"}
    for tag, attrs in tree.elements:
        if tag == "a" and dict(attrs).get("href"):
            assert dict(attrs).get("rel"), "every link opens without an opener"
    return tree
