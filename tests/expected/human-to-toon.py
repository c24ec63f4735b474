#!/usr/bin/env python3
"""human-to-toon: derives a fixture's pinned TOON profile from its
hand-written human report, through the reference TOON encoder.

    human-to-toon.py CAPTURE.jcap.txt EXPECTED.human > EXPECTED.toon

The human reports in fixtures/expected/ are written by hand from the
numbers each capture's comment computes; the lines under "look first:"
from the leads the reference model (tests/reference/profile_ref.py)
gives each capture, which the script checks against the totals.  This script re-reads those
numbers (and the names, capabilities and budgets from the capture's own
HELLO and FUNC lines), builds the jett.profile.v1 object (either mode) in
DESIGN section 7's field order and encodes it with @toon-format/toon, so that
the pinned TOON never comes from the code under test.  It needs node and
the package that tests/toon-check installs (TOON_MODULES: its
node_modules folder)."""
import json, os, re, subprocess, sys

CAPS = ["cpu_tick_source", "safe_stack_capture", "jett_runtime_thread_registration",
        "task_attribution", "source_spans", "process_cpu_time",
        "jett_heap_allocation_hooks", "free_and_resize_events"]
MEM_TOTALS = [("allocations", "allocation_count"), ("resizes", "resize_count"),
              ("allocated bytes", "allocated_bytes"), ("freed bytes", "freed_bytes"),
              ("peak live bytes", "peak_live_bytes"), ("retained bytes", "retained_bytes"),
              ("attributed bytes", "attributed_allocated_bytes")]
TOTALS = [("requested ticks", "requested_ticks"), ("recorded samples", "recorded_samples"),
          ("attributed samples", "attributed_samples"), ("runtime samples", "runtime_samples"),
          ("waiting samples", "waiting_samples"), ("unavailable samples", "unavailable_samples"),
          ("coalesced ticks", "coalesced_ticks"), ("dropped ticks", "dropped_ticks"),
          ("truncated stacks", "truncated_stacks"), ("observed rate", "observed_rate_hz"),
          ("wall time", "wall_ms"), ("process CPU time", "process_cpu_ms")]


def unescape_text(s):
    """Capture-text string escapes to the raw string."""
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == "\\":
            c = s[i + 1]
            if c == "x":
                out.append(int(s[i + 2:i + 4], 16)); i += 4; continue
            out += {"n": b"\n", "t": b"\t", "r": b"\r", '"': b'"', "\\": b"\\"}[c]
            i += 2; continue
        out += s[i].encode(); i += 1
    return out.decode()


def unescape_human(s):
    """The human report's \\xNN escapes back to the raw string."""
    return re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]),
                  s.encode()).decode()


def capture_info(path):
    """FUNC names, HELLO capabilities, and the exact byte counts a comment
    pins for the retained rows the report shows in KiB or more
    ("# retained row: HOLDER NS.FN BYTES OBJECTS")."""
    names, caps, pins = [], [], {}
    for line in open(path, encoding="utf-8"):
        if line.startswith("HELLO"):
            caps = re.search(r"capabilities=(\S*)", line).group(1).split(",")
        if line.startswith("FUNC"):
            f = re.findall(r'(namespace|function)="((?:[^"\\]|\\.)*)"', line)
            names.append((unescape_text(f[0][1]), unescape_text(f[1][1])))
        m = re.match(r"# retained row: (\S+) (\S+) (\d+) (\d+)$", line.rstrip("\n"))
        if m:
            pins[(m.group(1), m.group(2), int(m.group(4)))] = int(m.group(3))
    return names, caps, pins


def num(v):
    if v == "unavailable":
        return v
    f = float(v)
    return int(f) if f == int(f) else f


def split_name(name, names):
    for ns, fn in names:
        if ns + "." + fn == name:
            return ns, fn
    raise SystemExit("no FUNC named " + name)


# A byte count as the report prints it: "N byte(s)", or "X.YZ UNIT (N
# bytes)" from 1 KiB up; the unit is read only to check it.
SIZE = r"(?:\d+ bytes?|\d+\.\d\d [KMGTPE]iB \(\d+ bytes\))"
UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]


def size(text):
    """The exact byte count of SIZE (or a bare total), checking that the
    unit is the one jett-profile(7) gives it."""
    if text == "unavailable":
        return text
    m = re.fullmatch(r"(\d+)(?: bytes?)?", text)
    if m:
        n = int(m.group(1))
        assert n < 1024, text
        assert not text.endswith("s") or n != 1, text
        return n
    m = re.fullmatch(r"(\d+)\.(\d\d) ([KMGTPE]iB) \((\d+)(?: bytes)?\)", text)
    n, u = int(m.group(4)), UNITS.index(m.group(3))
    d = 1024 ** (u + 1)
    h = (n * 200 + d) // (2 * d)
    below = (n * 200 + d // 1024) // (2 * d // 1024)  # the same at the unit below
    assert n >= 1024 and (h < 102400 or u == 5) and (u == 0 or below >= 102400), text
    assert h == int(m.group(1)) * 100 + int(m.group(2)), text
    return n


SHORT = r"(?:\d+ bytes?|\d+\.\d\d [KMGTPE]iB)"


def short_size(text, exact=None):
    """A retained line's byte count, without the exact count beside it:
    exact below 1024, else checked against the pinned `exact`."""
    m = re.fullmatch(r"(\d+) bytes?", text)
    if m:
        n = int(m.group(1))
        assert n < 1024 and (exact is None or exact == n), text
        return n
    assert exact is not None, "no pinned count for " + text
    m = re.fullmatch(r"(\d+)\.(\d\d) ([KMGTPE]iB)", text)
    assert m, text
    return size("%s.%s %s (%d bytes)" % (m.group(1), m.group(2), m.group(3), exact))


def count(text, noun):
    """"1 NOUN" or "N NOUNs" (the plural only for other than one)."""
    m = re.fullmatch(r"(\d+) " + noun + r"(s?)", text)
    n = int(m.group(1))
    assert (m.group(2) == "") == (n == 1), text
    return n


def unfold(chain):
    """A chain's runs of one frame, "ns.fn ×N", written out."""
    out = []
    for seg in chain.split(" > "):
        m = re.fullmatch(r"(.*) \u00d7(\d+)", seg)
        out += [m.group(1)] * int(m.group(2)) if m else [seg]
    return " > ".join(out)


def split_loc(loc):
    """PATH:LINE[:COLUMN] with PATH possibly holding colons."""
    if loc == "(no source)":
        return "unavailable", "unavailable", "unavailable"
    if loc.endswith(" (line unavailable)"):
        return loc[:-19], "unavailable", "unavailable"
    m = re.fullmatch(r"(.*):(\d+):(\d+)", loc)
    if m:
        return m.group(1), int(m.group(2)), int(m.group(3))
    m = re.fullmatch(r"(.*):(\d+|unavailable)", loc)
    return m.group(1), num(m.group(2)), None


def name_loc(text, names):
    """NAME  LOCATION (ORIGIN), or NAME  (no source)."""
    m = re.fullmatch(r"(.*)  \(no source\)", text)
    if m:
        return split_name(unescape_human(m.group(1)), names), ("unavailable", "unavailable"), \
            "unavailable"
    m = re.fullmatch(r"(.*)  (\S.*) \((\w+)\)", text)
    path, ln, _ = split_loc(unescape_human(m.group(2)))
    return split_name(unescape_human(m.group(1)), names), (path, ln), m.group(3)


def calls(text):
    """"N calls" / "1 call", or "calls unavailable"."""
    return "unavailable" if text == "calls unavailable" else count(text, "call")


def entry(line, names):
    m = re.fullmatch(r"#(\d+)  ([\d.]+)%  self (\d+) \(([\d.]+)%\) / inclusive (\d+) / "
                     r"(\d+ calls?|calls unavailable)  (.*)", line)
    (ns, fn), (path, ln), origin = name_loc(m.group(7), names)
    return {"rank": int(m.group(1)), "namespace": ns, "function": fn, "path": path,
            "line": ln, "inclusive_samples": int(m.group(5)), "self_samples": int(m.group(3)),
            "cpu_percent": num(m.group(2)), "self_percent": num(m.group(4)),
            "calls": calls(m.group(6)), "origin": origin,
            "hot_lines": [], "call_lines": [], "call_chains": [], "suggestions": []}


def mem_entry(line, names):
    m = re.fullmatch(r"#(\d+)  ([\d.]+)%  (" + SIZE + r") / (\d+ allocations?)  (.*)", line)
    (ns, fn), (path, ln), origin = name_loc(m.group(5), names)
    return {"rank": int(m.group(1)), "namespace": ns, "function": fn, "path": path,
            "line": ln, "allocation_count": count(m.group(4), "allocation"),
            "allocated_bytes": size(m.group(3)),
            "allocation_percent": num(m.group(2)), "freed_bytes": None, "retained_bytes": None,
            "live_at_peak_bytes": None, "resize_count": None, "origin": origin,
            "hot_lines": [], "call_chains": [], "suggestions": []}


def call_line(e, line, attributed):
    """"call line LOC  N samples (P%) in C calls -> ns.fn  | code": the
    share is checked against the attributed samples, not kept."""
    m = re.fullmatch(r"    call line (.*?)  (\d+ samples?) \(([\d.]+)%\)(?: in (\d+ calls?)|, "
                     r"(calls unavailable))(?: -> (.*?))?  (?:\| (.*?)(  \(redacted\))?|code "
                     r"unavailable)", line)
    path, ln, col = split_loc(unescape_human(m.group(1)))
    n = count(m.group(2), "sample")
    assert "%d.%02d" % divmod((n * 20000 + attributed) // (2 * attributed), 100) == m.group(3), line
    e["call_lines"].append({
        "path": path, "line": ln, "column": col if col else "unavailable", "inclusive_samples": n,
        "calls": calls(m.group(4) or m.group(5)),
        "code": m.group(7) if m.group(7) is not None else "unavailable",
        "source_redacted": m.group(8) is not None,
        "callee": unescape_human(m.group(6)) if m.group(6) else "unavailable"})


def detail(e, line):
    if line.startswith("    freed "):
        v = "(" + SIZE + "|unavailable)"
        m = re.fullmatch(r"    freed " + v + ", retained " + v + ", live at peak " + v +
                         r", resizes (\w+)", line)
        for k, g in zip(["freed_bytes", "retained_bytes", "live_at_peak_bytes"], m.groups()):
            e[k] = size(g)
        e["resize_count"] = num(m.group(4))
    elif line.startswith("    hot line  "):
        weight = r"(\d+ samples?)" if "self_samples" in e else \
            r"(" + SIZE + r" / \d+ allocations?)"
        m = re.fullmatch(r"    hot line  (.*?)  " + weight +
                         r"  (?:\| (.*?)(  \(redacted\))?|code unavailable)", line)
        path, ln, col = split_loc(unescape_human(m.group(1)))
        code = m.group(3) if m.group(3) is not None else "unavailable"
        row = {"path": path, "line": ln, "column": col if col else "unavailable"}
        if "self_samples" in e:
            row["self_samples"] = count(m.group(2), "sample")
        else:
            b, n = m.group(2).rsplit(" / ", 1)
            row["allocation_count"], row["allocated_bytes"] = count(n, "allocation"), size(b)
        row.update({"code": code, "source_redacted": m.group(4) is not None})
        e["hot_lines"].append(row)
    elif line.startswith("    chain     "):
        if "self_samples" in e:
            m = re.fullmatch(r"    chain     (\d+ samples?)  (.*)", line)
            w = {"samples": count(m.group(1), "sample")}
        else:
            m = re.fullmatch(r"    chain     (" + SIZE + r")  (.*)", line)
            w = {"bytes": size(m.group(1))}
        w["chain"] = unfold(unescape_human(m.group(2)))
        e["call_chains"].append(w)
    elif line.startswith("    suggest   "):
        rule, text = line[14:].split(": ", 1)
        e["suggestions"].append({"rule": rule, "text": unescape_human(text)})
    elif line == "    suggestions unavailable":
        e["suggestions"] = "unavailable"
    else:
        raise SystemExit("unexpected line: " + line)


def top_self(line, entries, names):
    """A row of the self-time table repeats an entry's numbers: checked,
    not kept (the TOON has them in the entry)."""
    m = re.fullmatch(r"  (.*)  self (\d+ samples?)  ([\d.]+)%(?:  at (.*))?", line)
    ns, fn = split_name(unescape_human(m.group(1)), names)
    e = next(e for e in entries if (e["namespace"], e["function"]) == (ns, fn))
    assert e["self_samples"] == count(m.group(2), "sample"), line
    assert e["self_percent"] == num(m.group(3)), line


def time_line(line, totals):
    """The time split repeats the totals: the wall and CPU time, then the
    shares of the recorded samples and the coalesced ticks
    (jett-profile(7)): checked, not kept."""
    n = totals["recorded_samples"]
    if n == "unavailable":
        assert line == "time: unavailable", line
        return
    coalesced = 0 if totals["coalesced_ticks"] == "unavailable" else totals["coalesced_ticks"]
    d = n + coalesced
    head = "time: "
    if totals["wall_ms"] != "unavailable":
        head += "%d ms wall" % totals["wall_ms"]
        if totals["process_cpu_ms"] != "unavailable":
            head += ", %d ms CPU" % totals["process_cpu_ms"]
        head += ": " if d else ", "
    if d == 0:
        assert line == head + "no samples", line
        return

    def share(v):
        return "%d.%02d%%" % divmod((v * 20000 + d) // (2 * d), 100)
    want = head + "%s running Jett code, %s waiting, %s runtime" % (
        share(totals["attributed_samples"] + coalesced), share(totals["waiting_samples"]),
        share(totals["runtime_samples"]))
    if totals["unavailable_samples"]:
        want += ", %s unavailable" % share(totals["unavailable_samples"])
    want += " (%d sample%s" % (n, "" if n == 1 else "s")
    if coalesced:
        want += ", %d coalesced tick%s" % (coalesced, "" if coalesced == 1 else "s")
    want += ")"
    assert line == want, (line, want)


def mem_summary(line, totals):
    """A memory report's first line repeats the totals, sizes without
    their exact counts: checked, not kept."""
    t = totals
    if t["allocated_bytes"] == "unavailable":
        assert line == "memory: unavailable", line
        return
    n = t["allocation_count"]
    want = "memory: %s allocated (%d allocation%s), " % (short_text(t["allocated_bytes"]), n,
                                                         "" if n == 1 else "s")
    if t["peak_live_bytes"] == "unavailable":
        want += "live bytes unavailable"
    elif t["retained_bytes"] == "unavailable":
        want += "%s live at peak, retained bytes unavailable" % short_text(t["peak_live_bytes"])
    else:
        want += "%s live at peak, %s retained at exit" % (short_text(t["peak_live_bytes"]),
                                                          short_text(t["retained_bytes"]))
    assert line == want, (line, want)


def short_text(n):
    """A byte count as the report writes it without the exact count."""
    if n < 1024:
        return "%d byte%s" % (n, "" if n == 1 else "s")
    for u, name in enumerate(UNITS):
        d = 1024 ** (u + 1)
        h = (n * 200 + d) // (2 * d)
        if h < 102400 or u == 5:
            return "%d.%02d %s" % (h // 100, h % 100, name)


LEADS = {"busiest task": ("task", "task_samples", "every task's samples"),
         "most waiting": ("waiting", "waiting_samples", "waiting samples"),
         "most self time": ("self", "attributed_samples", "samples in Jett code"),
         "largest holder": ("holder", "retained_bytes", "retained bytes"),
         "most live at peak": ("peak", "peak_live_bytes", "peak live bytes"),
         "most allocated": ("allocated", "attributed_allocated_bytes", "attributed bytes")}


def lead_row(line, names, totals):
    """A line under "look first:" (jett-profile(7), Leads): the share is
    checked against the total it is of, where the totals hold it."""
    m = re.fullmatch(r"  (" + "|".join(LEADS) + r")(?: (\d+))?  (.*?)  (.*?)  (\d+ samples?|"
                     + SIZE + r"), ([\d.]+)% of "
                     r"(.*?)(?:, (\d+ calls?))?(?:; the other tasks waited (\d+ samples?))?", line)
    assert m, line
    kind, of, words = LEADS[m.group(1)]
    assert m.group(7) == words, line
    assert (m.group(2) is not None) == (kind == "task"), line
    name = unescape_human(m.group(3))
    ns, fn = name.rsplit(".", 1) if kind == "holder" else split_name(name, names)
    path, ln, col = split_loc(unescape_human(m.group(4)))
    samples = kind in ("task", "waiting", "self")
    value = count(m.group(5), "sample") if samples else size(m.group(5))
    whole = totals.get(of)
    if whole not in (None, "unavailable"):
        assert "%d.%02d" % divmod((value * 20000 + whole) // (2 * whole), 100) == m.group(6), line
    return {"kind": kind, "task": int(m.group(2)) if m.group(2) else "unavailable",
            "namespace": ns, "name": fn, "path": path, "line": ln,
            "column": col if col else "unavailable", "value": value,
            "unit": "samples" if samples else "bytes", "percent": num(m.group(6)), "of": of}


def wait_row(line, names):
    m = re.fullmatch(r"  (.*?)  (\(no source\)|\S+(?: \(line unavailable\))?)  (\d+ samples?)  "
                     r"([\d.]+)% of waiting", line)
    ns, fn = split_name(unescape_human(m.group(1)), names)
    path, ln, col = split_loc(unescape_human(m.group(2)))
    return {"namespace": ns, "function": fn, "path": path, "line": ln,
            "column": col if col else "unavailable", "samples": count(m.group(3), "sample"),
            "waiting_percent": num(m.group(4))}


def retained_row(line, names, pins):
    """One retained line (jett-profile(7), "Retained holders")."""
    na = "unavailable"
    rest = {"holder": "<remainder>", "holder_path": na, "holder_line": na, "namespace": na,
            "function": na, "path": na, "line": na}
    if line == "the rest unavailable":
        return dict(rest, retained_bytes=na, objects=na)
    m = re.fullmatch(r"(" + SHORT + r") in (\d+ more objects?)", line)
    if m:
        return dict(rest, retained_bytes=short_size(m.group(1)),
                    objects=count(m.group(2), "more object"))
    m = re.fullmatch(r"(" + SHORT + r") held by (no binding|(.*?) (?:\((.*)\)|\(no source\))): "
                     r"(\d+ objects?) created in (an unknown function|(.*?) (?:\((.*)\)|"
                     r"\(no source\)))", line)
    assert m, line
    holder = na if m.group(2) == "no binding" else unescape_human(m.group(3))
    objects = count(m.group(5), "object")
    row = {"holder": holder, "holder_path": na, "holder_line": na}
    if m.group(4) is not None:
        row["holder_path"], row["holder_line"], _ = split_loc(unescape_human(m.group(4)))
    row.update({"namespace": na, "function": na, "path": na, "line": na})
    if m.group(6) != "an unknown function":
        fname = unescape_human(m.group(7))
        row["namespace"], row["function"] = split_name(fname, names)
        if m.group(8) is not None:
            row["path"], row["line"], _ = split_loc(unescape_human(m.group(8)))
        pin = pins.get((holder, fname, objects))
    else:
        pin = pins.get((holder, "-", objects))
    row["retained_bytes"] = short_size(m.group(1), pin)
    row["objects"] = objects
    return row


def retained_section(lines, p, names, pins):
    """The retained lines between the totals and the bottlenecks: the
    status and rows; none means the walk is unavailable."""
    rows, status = [], "unavailable"
    for line in lines:
        if line.startswith("retained at exit"):
            m = re.fullmatch(r"retained at exit( \(partial\))?: (.*)", line)
            rest = m.group(2)
            hm = re.fullmatch(r"(" + SHORT + r"); holders unavailable", rest)
            if hm:
                t = p["totals"]["retained_bytes"]
                assert t != "unavailable" and short_size(hm.group(1), t) == t, line
                break
            status = "partial" if m.group(1) else "complete"
            if rest != "nothing":
                rows.append(retained_row(rest, names, pins))
        elif status != "unavailable" and line.startswith("  "):
            rows.append(retained_row(line[2:], names, pins))
        else:
            break
    p["retained_status"] = status
    p["retained"] = rows if status != "unavailable" else "unavailable"


def mem_header(lines, p):
    m = re.fullmatch(r"config: threshold ([\d.]+)%, limit (\d+), retention metadata budget "
                     r"(" + SIZE + ")", lines[0])
    p["config"] = {"threshold_basis_points": round(float(m.group(1)) * 100),
                   "limit": int(m.group(2)), "retention_metadata_budget_bytes": size(m.group(3))}
    p["totals"] = {}
    for label, key in MEM_TOTALS:
        v = next(l for l in lines if l.startswith("  " + label + " "))[24:]
        p["totals"][key] = num(v) if key in ("allocation_count", "resize_count") else size(v)


def status_line(line, p):
    m = re.fullmatch(r"status: (\w+)(?: \((\w+)\))?, termination: (\w+)", line)
    p["status"] = m.group(1)
    if m.group(2):
        p["partial_reason"] = m.group(2)
    p["termination"] = m.group(3)


def footer(lines, p, cpu):
    """The report's last lines, from the last "backend:" line: backend and
    coverage, the configuration, the totals.  Returns where they start."""
    b = max(i for i, l in enumerate(lines) if l.startswith("backend: "))
    m = re.fullmatch(r"backend: (.*), coverage: (\w+)", lines[b])
    p["backend"], p["coverage"] = m.group(1), m.group(2)
    (header if cpu else mem_header)(lines[b + 1:], p)
    return b


def header(lines, p):
    m = re.fullmatch(r"config: rate (\d+) Hz, threshold ([\d.]+)%, limit (\d+), "
                     r"CPU metadata budget (" + SIZE + ")", lines[0])
    p["config"] = {"requested_rate_hz": int(m.group(1)),
                   "threshold_basis_points": round(float(m.group(2)) * 100),
                   "limit": int(m.group(3)), "cpu_metadata_budget_bytes": size(m.group(4))}
    totals = {}
    for label, key in TOTALS:
        line = next(l for l in lines if l.startswith("  " + label + " "))
        totals[key] = num(line[24:].split(" ")[0])
    p["totals"] = totals


def profile(capture, human):
    names, caps, pins = capture_info(capture)
    lines = open(human, encoding="utf-8").read().rstrip("\n").split("\n")
    cpu = lines[0] == "CPU profile"
    p = {"schema": "jett.profile.v1", "mode": "cpu" if cpu else "memory"}
    status_line(lines[2], p)
    end = footer(lines, p, cpu)
    # the second line, the time split or the memory summary, is checked
    (time_line if cpu else mem_summary)(lines[1], p["totals"])
    i = 4 if lines[3].startswith("collector errors: ") else 3
    leads = []
    if lines[i] == "look first: unavailable":
        leads, i = "unavailable", i + 1
    elif lines[i] == "look first:":
        i += 1
        while lines[i].startswith("  "):
            leads.append(lead_row(lines[i], names, p["totals"]))
            i += 1
    entries, counts, waits, section, waits_first = [], None, [], None, None
    body = lines[i:end]
    if not cpu:
        retained_section(body, p, names, pins)
        body = body[next(i for i, l in enumerate(body) if l.startswith("bottlenecks: ")):]
    for line in body:
        if line.startswith("bottlenecks: "):
            counts = [int(x) for x in re.findall(r"\d+", line)]
            section = None
            waits_first = bool(waits)
        elif line.startswith("#"):
            entries.append((entry if cpu else mem_entry)(line, names))
        elif line in ("top self time:", "waiting call sites:"):
            section = line
        elif section == "top self time:":
            top_self(line, entries, names)
        elif section == "waiting call sites:" and line.startswith("    chain     "):
            waits[-1]["chain"] = unfold(unescape_human(line[14:]))
        elif section == "waiting call sites:":
            waits.append(wait_row(line, names))
            waits[-1]["chain"] = "unavailable"
        elif line.startswith("    call line "):
            call_line(entries[-1], line, p["totals"]["attributed_samples"])
        else:
            detail(entries[-1], line)
    if waits:
        # jett-profile(7): before the bottlenecks exactly when waiting
        # samples are at least the attributed ones
        t = p["totals"]
        assert waits_first == (t["waiting_samples"] >= t["attributed_samples"]), waits_first
    p["bottlenecks"] = entries
    p["eligible_bottlenecks"], p["emitted_bottlenecks"], p["truncated_bottlenecks"] = counts
    p["leads"] = leads
    if cpu:
        p["waiting"] = "unavailable" if p["totals"]["waiting_samples"] == "unavailable" else waits
    else:  # the retained section comes after the bottleneck counts
        p["retained_status"] = p.pop("retained_status")
        p["retained"] = p.pop("retained")
    p["capabilities"] = {c: c in caps for c in CAPS}
    return {"profile": p}


def main():
    doc = json.dumps(profile(sys.argv[1], sys.argv[2]), ensure_ascii=False)
    modules = os.environ.get("TOON_MODULES", "build/toon-check/node_modules")
    script = ("import {encode} from '" + os.path.abspath(modules) +
              "/@toon-format/toon/dist/index.mjs';"
              "let s='';process.stdin.on('data',d=>s+=d);"
              "process.stdin.on('end',()=>process.stdout.write(encode(JSON.parse(s))));")
    out = subprocess.run(["node", "--input-type=module", "-e", script], input=doc.encode(),
                         stdout=subprocess.PIPE, check=True).stdout
    sys.stdout.buffer.write(out)


main()
