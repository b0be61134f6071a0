//! The report's stylesheet, scoped to `.oomlens`.

/// Scoped to `.oomlens`, so that a notebook's page keeps its own look. Light and dark.
pub(super) const STYLE: &str = r#"
.oomlens{--fg:#1d1f23;--muted:#5c6370;--line:#d9dce1;--panel:#fff;--bg:#fbfbfa;--bad:#b3261e;--bad-bg:#fbe9e7;--good:#1e6b35;--good-bg:#e4f4e8;--info-bg:#eef2fb;--measured:#0b6e75;--read:#4d4db3;--estimated:#9a4a00;
  color:var(--fg);background:var(--bg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1100px;margin:0 auto;padding:12px 16px}
@media (prefers-color-scheme:dark){.oomlens{--fg:#e6e8eb;--muted:#a0a7b1;--line:#343841;--panel:#1d2026;--bg:#15171b;--bad:#ff8a80;--bad-bg:#3a1d1b;--good:#7ee2a0;--good-bg:#15301f;--info-bg:#1c2435;--measured:#5fc9d0;--read:#a9a9f5;--estimated:#f0a65c}}
.oomlens h1{font-size:1.25em;margin:.2em 0 .4em}
.oomlens h2{font-size:1.05em;margin:1.4em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:.2em}
.oomlens h3{font-size:1em;margin:0 0 .3em}
.oomlens code,.oomlens .mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.92em;overflow-wrap:anywhere}
.oomlens .muted{color:var(--muted)}
.oomlens .verdict{padding:.5em .75em;border-radius:6px;background:var(--info-bg)}
.oomlens .verdict.bad{background:var(--bad-bg)}.oomlens .verdict.good{background:var(--good-bg)}
.oomlens .bad{color:var(--bad)}.oomlens .good{color:var(--good)}
.oomlens .figures{display:flex;flex-wrap:wrap;gap:.4em 1.4em;list-style:none;padding:0;margin:.5em 0}
.oomlens .label{display:inline-block;font-size:.75em;padding:0 .45em;border-radius:9px;border:1px solid currentColor;vertical-align:.1em}
.oomlens .l-measured{color:var(--measured)}.oomlens .l-read{color:var(--read)}.oomlens .l-estimated{color:var(--estimated)}
.oomlens .card{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:.6em .8em;margin:.6em 0}
.oomlens .card p{margin:.3em 0}
.oomlens .card ol.fixes{margin:.2em 0 .3em;padding-left:1.6em}.oomlens .card ol.fixes li{margin:.2em 0}
.oomlens .card .tail{color:var(--muted);font-size:.92em}
.oomlens table{border-collapse:collapse;margin:.3em 0}
.oomlens th,.oomlens td{padding:.15em .6em;text-align:left;vertical-align:top;border-bottom:1px solid var(--line)}
.oomlens .num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
.oomlens .wrap{overflow-x:auto}
.oomlens tr.selected td{font-weight:600}.oomlens tr.no-kernel td{color:var(--bad)}
.oomlens figure{margin:.8em 0}.oomlens figcaption{color:var(--muted);font-size:.9em}
.oomlens svg{display:block;width:100%;max-width:760px;height:auto}
.oomlens svg.bar{height:22px}
.oomlens .roles,.oomlens .legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3em 1.2em}
.oomlens .swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.35em;vertical-align:-.05em}
.oomlens footer{margin-top:1.5em;font-size:.9em;color:var(--muted)}
.oomlens .tool{font-size:.85em}
.oomlens article.host+article.host{border-top:3px double var(--line);margin-top:2em}
"#;
