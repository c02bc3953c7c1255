"""Every table the workflow publishes, written three ways: CSV (the data),
Markdown (for a terminal or a notebook) and a small self-contained HTML
page, which is what the Snakemake report shows (it offers CSVs for
download only)."""

import html as html_escape

STYLE = (
    "body{font-family:sans-serif;font-size:13px;margin:12px}"
    "table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:3px 6px;"
    "text-align:left}th{background:#f0f0f0}tr:nth-child(even){background:#fafafa}"
    "p{max-width:60em;color:#333}"
)


def _shown(table):
    """Missing values as "–", not "nan"."""
    return table.astype(object).where(table.notna(), None)


def markdown(table, title, caption, floatfmt=".4g"):
    body = (
        _shown(table).to_markdown(index=False, floatfmt=floatfmt, missingval="–")
        if len(table)
        else "(nothing measured)"
    )
    return "### {}\n\n{}\n\n{}\n".format(title, body, caption)


def html(table, title, caption):
    def number(value):
        return "{:.4g}".format(value)

    body = table.to_html(index=False, na_rep="–", float_format=number, border=0)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>'
        "<style>{style}</style></head>\n<body><h3>{title}</h3>\n{body}\n<p>{caption}</p>"
        "</body></html>\n"
    ).format(
        title=html_escape.escape(title),
        style=STYLE,
        body=body,
        caption=html_escape.escape(caption),
    )


def write(output, table, title, caption, shown=None):
    """``table`` to ``output.csv``; ``shown`` (the table as people read it,
    ``table`` by default) to ``output.markdown`` and ``output.html``."""
    table.to_csv(output.csv, index=False)
    shown = table if shown is None else shown
    with open(output.markdown, "w") as handle:
        handle.write(markdown(shown, title, caption))
    with open(output.html, "w") as handle:
        handle.write(html(shown, title, caption))
