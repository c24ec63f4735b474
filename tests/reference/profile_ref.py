#!/usr/bin/env python3
"""profile_ref: an independent, deliberately simple model of jett-profd.

    profile_ref.py DUMP.txt > PROFILE.json

Reads a capture as `jett profile dump` prints it and prints the
jett.profile.v1 object ({"profile": {...}}) as JSON, for both modes.  It
shares no code with the daemon: dictionaries instead of tries and arenas,
a full snapshot at each new peak instead of the lazy one, the excerpt
rules re-read from DESIGN section 10.  The byte budgets are modelled
from their documented costs (agg.h, jett-profile(7)); the stack-table
budget is not (the random captures stay far below it).  Only valid
captures are modelled: a collector error is out of scope, but for the
one jett-profile(7) defines for valid events: a byte total past
2^64 - 1 (Python's integers never wrap), and a capture cut short,
whose dump ends before FINISH (jett-profile(7), Status)."""
import json, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import escape_ref  # noqa: E402

U64_MAX = 2**64 - 1
# jett-profile(7): a live record holds sizes below 2^40 - 1; larger ones
# are also kept whole in a table of 16-byte slots
WIDE = 2**40 - 1

CAPS = ["cpu_tick_source", "safe_stack_capture", "jett_runtime_thread_registration",
        "task_attribution", "source_spans", "process_cpu_time",
        "jett_heap_allocation_hooks", "free_and_resize_events"]
ORIGINS = {"project": 0, "dependency": 1, "stdlib": 2}
FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def unquote(v):
    """A text-form value: a quoted string to bytes, '-' to None."""
    if v == "-":
        return None
    if not v.startswith('"'):
        return v
    out, i, s = bytearray(), 1, v[1:-1]
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            n = s[i + 1]
            if n == "x":
                out.append(int(s[i + 2:i + 4], 16))
                i += 4
                continue
            out += {"n": b"\n", "t": b"\t", "r": b"\r", '"': b'"', "\\": b"\\"}[n]
            i += 2
            continue
        out += c.encode()
        i += 1
    return bytes(out)


def span(v):
    if v is None or v == "-":
        return None
    a, b = v.split("-")
    return (int(a), int(b))


def parse(path):
    recs = []
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#") or line in ("EVENTS", "END"):
            continue
        kind, _, rest = line.partition(" ")
        recs.append((kind, {k: unquote(v) for k, v in FIELD.findall(rest)}))
    return recs


def num_or_na(v):
    return "unavailable" if v is None else v


def hundredths(n, d):
    return (n * 20000 + d) // (2 * d)


def pct_value(h):
    return h // 100 if h % 100 == 0 else h / 100


def div_round(n, d):
    return (2 * n + d) // (2 * d)


def outermost(spans):
    """The spans no other span holds, by start.  The contract turns a span
    whose checked type contains secret into <secret-expression> as a
    whole, so what lies inside it (a literal, a comment) is replaced with
    it; of two spans with the same extent the secret is the outer one.
    A span holds another that starts before its end and ends within it."""
    def holds(t, s):
        return t[0] <= s[0] < t[1] and s[1] <= t[1]
    keep = []
    for i, s in enumerate(spans):
        inside = False
        for j, t in enumerate(spans):
            if j == i or not holds(t, s):
                continue
            same = (t[0], t[1]) == (s[0], s[1])
            if not same or t[2] == "secret" and s[2] != "secret" or (t[2] == s[2] and j < i):
                inside = True
        if not inside:
            keep.append(s)
    return sorted(keep)


class Source:
    def __init__(self, f):
        self.origin = ORIGINS[f["origin"]]
        self.path = f["path"]
        self.text = f["text"] or b""
        self.spans = []
        if f["spans"]:
            for s in f["spans"].split(","):
                kind, rng = s.split(":")
                a, b = rng.split("-")
                self.spans.append((int(a), int(b), kind))
        self.spans = outermost(self.spans)
        self.lines = [0] + [i + 1 for i, c in enumerate(self.text) if c == 10]

    def line_of(self, pos):
        k = 0
        while k + 1 < len(self.lines) and self.lines[k + 1] <= pos:
            k += 1
        return k


def excerpt(src, line):
    """DESIGN section 10 on one line: (code, redacted)."""
    t = src.text
    ls = src.lines[line]
    le = src.lines[line + 1] - 1 if line + 1 < len(src.lines) else len(t)
    if le > ls and t[le - 1] == 13:
        le -= 1
    spans = [s for s in src.spans if ls <= s[0] <= le and s[1] <= le]
    units, touched, i = [], False, ls
    while i < le or any(s[0] == i == s[1] for s in spans):
        sp = next((s for s in spans if s[0] == i), None)
        if sp:
            spans.remove(sp)
            touched = True
            out = {"comment": None, "literal": b"<redacted-literal>",
                   "secret": b"<secret-expression>"}[sp[2]]
            units.append(("comment" if out is None else "token", out or b""))
            i = max(sp[1], i)
            continue
        nxt = min([s[0] for s in spans if s[0] > i] + [le])
        n, shown_escaped = escape_ref.unit(t, i, nxt)
        raw = t[i:i + n]
        if raw == b" ":
            units.append(("blank", raw))
        elif raw == b"\t":
            units.append(("blank", b"\\x09"))
        elif shown_escaped:  # jett-profile(7), Escaped text
            units.append(("escape", escape_ref.escape(raw)))
        else:
            units.append(("char", raw))
        i += n
    solid = [k for k, u in enumerate(units) if u[0] not in ("blank", "comment")]
    units = units[solid[0]:solid[-1] + 1] if solid else []
    out, redacted = b"", touched
    for kind, b in units:
        if kind == "comment":
            continue
        if len(out) + len(b) > 160:
            redacted = True
            break
        if kind == "escape" or (kind == "blank" and b != b" "):
            redacted = True
        out += b
    return out.decode("utf-8"), redacted


class Records:
    """Live records by allocation id (jett-profile(7), Budgets): a window
    of 8-byte slots over the most recent ids [base, base + cap), 256
    slots first, doubling when a third of it would be live if both
    windows fit; older ids still live when the window slides past them
    go to a table of 16-byte slots, 256 first, doubling at three
    quarters full when both tables fit.  Room is asked of the model's
    budget.  With task attribution a record also names the task that
    created its allocation (owner): 16 bytes a window slot, 24 a table
    slot."""

    def __init__(self, model, creators):
        self.model = model
        self.win_slot, self.table_slot = (16, 24) if creators else (8, 16)
        self.win_cap, self.win_base, self.win_n, self.table_cap, self.table_n = 0, 0, 0, 0, 0
        self.ids = set()
        self.owner = {}

    def bytes(self):
        return self.win_cap * self.win_slot + self.table_cap * self.table_slot

    def table_room(self):
        if (self.table_n + 1) * 4 <= self.table_cap * 3:
            return True
        new = self.table_cap * 2 if self.table_cap else 256
        if not self.model.mem_fits(new * self.table_slot):
            return False
        self.table_cap = new
        return True

    def add(self, aid):
        if self.win_cap == 0:
            if not self.model.mem_fits(256 * self.win_slot):
                return False
            self.win_cap, self.win_base = 256, aid
        elif ((self.win_n + 1) * 3 > self.win_cap and
              self.model.mem_fits(self.win_cap * 2 * self.win_slot)):
            self.win_cap *= 2
        target = aid - self.win_cap + 1
        if target > self.win_base:
            # the window slides: live records it passes move to the table
            for old in sorted(k for k in self.ids if self.win_base <= k < target):
                if not self.table_room():
                    self.win_base = old
                    return False
                self.table_n += 1
                self.win_n -= 1
            self.win_base = target
        self.ids.add(aid)
        self.win_n += 1
        return True

    def drop(self, aid):
        self.ids.discard(aid)
        self.owner.pop(aid, None)
        if aid < self.win_base:
            self.table_n -= 1
        else:
            self.win_n -= 1


class Model:
    def __init__(self, recs):
        self.sources, self.funcs, self.nodes = [], [], []
        self.hello = self.finish = None
        for kind, f in recs:
            getattr(self, "rec_" + kind.lower())(f)

    # ---- tables ----
    def rec_hello(self, f):
        self.hello = f
        self.mode = f["mode"]
        self.budget_cpu = int(f["cpu_budget"])
        self.budget_ret = int(f["retention_budget"])
        self.caps = (f["capabilities"] or "").split(",")
        self.cpu = dict(recorded=0, attributed=0, runtime=0, waiting=0, unavailable=0,
                        truncated=0)
        self.fn = {}       # ident -> [inclusive, self]
        self.hot = {}      # (ident, start) -> [self, end]
        self.chain = {}    # chain tuple -> count (cpu) or bytes (memory)
        self.used, self.hot_cap, self.limited = 0, 0, False
        # jett-profile(7), issue 35: call lines (caller, site start) ->
        # {callee: samples}, the chains of waiting call sites (the site's
        # hot key) -> {chain: samples}; one index holds them with the hot
        # lines and waiting sites (index_n entries)
        self.calls_line, self.wait_chain, self.index_n = {}, {}, 0
        # the CALLS records: calls by identity and by (identity, site start)
        self.have_calls, self.fn_calls, self.site_calls = False, {}, {}
        self.mem = dict(count=0, resizes=0, allocated=0, freed=0, attributed=0, live=0, peak=0)
        # mem_limited: no allocation is tracked any more; detail_full: the
        # buckets alone filled the retention budget (jett-profile(7),
        # Budgets)
        self.sites, self.live, self.mem_limited, self.detail_full = {}, {}, False, False
        # jett-profile(7): allocation lines, (ident, start) -> [bytes,
        # allocations, end], 32 bytes each plus their index, sized as the
        # hot-line index (16 slots, doubling at half full, both held
        # while it resizes)
        self.lines, self.line_cap = {}, 0
        # jett-profile(7), Tasks: with task attribution, a row per TASK
        # record, and each live record names its creator's row
        self.tasks_on = "task_attribution" in self.caps
        self.tasks = []
        # live records: a window of slots for ids [win_base, win_base +
        # win_cap) and a table of slots for older ids
        self.rec = Records(self, self.tasks_on)
        self.wide_cap, self.wide = 0, set()  # ids whose size is kept whole
        self.overflow = False                # an event refused: total past 2^64 - 1
        self.max_id, self.peak_snapshot = None, {}
        self.walk_rows, self.walk_closed, self.walk_cut, self.walk_refused = [], False, False, False

    def rec_source(self, f):
        self.sources.append(Source(f))

    def rec_func(self, f):
        src = None if f["source"] is None else int(f["source"])
        key = (f["namespace"], f["function"],
               None if src is None else (self.sources[src].origin, self.sources[src].path),
               span(f["decl"]))
        self.funcs.append((key, src))

    def rec_stack(self, f):
        parent = None if f["parent"] is None else int(f["parent"])
        ident = self.funcs[int(f["func"])][0]
        chain = (self.nodes[parent][1] if parent is not None else ()) + (ident,)
        # each frame's call site: the call in the frame before it
        sites = (self.nodes[parent][3] if parent is not None else ()) + (span(f["site"]),)
        self.nodes.append((parent, chain, int(f["func"]), sites))

    def rec_calls(self, f):
        """jett-capture(5): several CALLS records add up; the counts of
        FUNC records of one identity add up too."""
        self.have_calls = True
        for item in (f["functions"] or "-").split(","):
            if item != "-":
                fid, n = item.split(":")
                ident = self.funcs[int(fid)][0]
                self.fn_calls[ident] = self.fn_calls.get(ident, 0) + int(n)
        for item in (f["sites"] or "-").split(","):
            if item != "-":
                fid, sp, n = item.split(":")
                ident = self.funcs[int(fid)][0]
                key = (ident, int(sp.split("-")[0]))
                self.site_calls[key] = self.site_calls.get(key, 0) + int(n)

    def rec_finish(self, f):
        self.finish = f

    def rec_task(self, f):
        spawn = None if f["spawn_func"] is None else self.funcs[int(f["spawn_func"])]
        site = span(f["site"])
        self.tasks.append(dict(task=int(f["task"]), ident=self.funcs[int(f["func"])][0],
                               spawn=None if spawn is None else spawn[0],
                               at=None if site is None else site[0],
                               samples=0, waiting=0, allocated=0, live=0))

    def task_row(self, f):
        """The row of an event's task: its number names a TASK record."""
        t = f.get("task")
        if not self.tasks_on or t is None or not 1 <= int(t) <= len(self.tasks):
            return None
        return self.tasks[int(t) - 1]

    # ---- the walk of retained holders (jett-profile(7), "Retained holders") ----
    def rec_retained(self, f):
        """A RETAINED record: kept in the retention arena, 32 bytes plus
        the holder's namespace and name plus 24 bytes a row, rounded up to
        a multiple of 8; the first that does not fit and every later one
        are dropped.  No holder: a closing record; complete false: a
        budget stopped the walk."""
        ns, name = f["namespace"], f["name"]
        rows = []
        if f["rows"]:
            for r in f["rows"].split(","):
                func, nbytes, objects = r.split(":")
                rows.append((None if func == "-" else int(func), int(nbytes), int(objects)))
        if ns is None:
            self.walk_closed = True
        if f["complete"] == "false":
            self.walk_cut = True
        size = (32 + len(ns or b"") + len(name or b"") + 24 * len(rows) + 7) // 8 * 8
        if self.walk_refused or not self.mem_fits(size):
            self.walk_refused = True
            return
        self.used += size
        holder = None
        if ns is not None:
            src = None if f["source"] is None else self.sources[int(f["source"])]
            holder = (ns, name, None if src is None else (src.origin, src.path),
                      span(f["decl"]) if src is not None else None, src)
        for func, nbytes, objects in rows:
            ident = None if func is None else self.funcs[func][0]
            self.walk_rows.append((holder, ident, nbytes, objects))

    # ---- cpu ----
    def fn_bucket(self, ident):
        # jett-profile(7): a function bucket costs 32 bytes
        if ident not in self.fn:
            if self.limited or self.used + 32 + self.hot_cap * 8 > self.budget_cpu:
                self.limited = True
                return None
            self.used += 32
            self.fn[ident] = [0, 0]
        return self.fn[ident]

    def index_take(self, cost):
        """Room for one more bucket of `cost` bytes in the index of hot
        lines, waiting sites, call lines, callees and waiting chains (16
        slots, doubling at half full, both tables held while it grows)."""
        n = self.index_n
        after = 16 if self.hot_cap == 0 else (self.hot_cap * 2 if (n + 1) * 2 > self.hot_cap
                                               else self.hot_cap)
        peak = after if after == self.hot_cap else after + self.hot_cap
        if self.limited or self.used + cost + peak * 8 > self.budget_cpu:
            self.limited = True
            return False
        self.used += cost
        self.hot_cap = after
        self.index_n += 1
        return True

    def chain_bucket(self, chain):
        if chain not in self.chain:
            if self.limited or self.used + 8 + self.hot_cap * 8 > self.budget_cpu:
                self.limited = True
                return False
            self.used += 8
            self.chain[chain] = 0
        return True

    def hot_line(self, ident, sp):
        key = (ident, None if sp is None else sp[0])
        if key not in self.hot:
            if not self.index_take(24):
                return None
            self.hot[key] = [0, None if sp is None else sp[1]]
        self.hot[key][0] += 1
        return key

    def call_line(self, caller, start, callee):
        """A sample for the call line (caller, start), through callee: the
        call line (32 bytes), then its callee (24)."""
        line = (caller, start)
        if line not in self.calls_line:
            if not self.index_take(32):
                return
            self.calls_line[line] = {}
        callees = self.calls_line[line]
        if callee not in callees:
            if not self.index_take(24):
                return
            callees[callee] = 0
        callees[callee] += 1

    def call_sites(self, node):
        """jett-profile(7): for each frame k of the stack that is the
        outermost frame of its function at its call into frame k + 1 (the
        call site lying in its source), (k, caller, start, callee)."""
        chain, sites = self.nodes[node][1], self.nodes[node][3]
        seen, out = set(), {}
        for k in range(len(chain) - 1):
            caller, site = chain[k], sites[k + 1]
            src = source_of(self, caller)
            if site is None or src is None or not site[0] <= site[1] <= len(src.text):
                continue
            if (caller, site[0]) not in seen:
                seen.add((caller, site[0]))
                out[k] = (caller, site[0], chain[k + 1])
        return out

    def rec_cpu_sample(self, f):
        c = self.cpu
        c["recorded"] += 1
        state = f["state"]
        row = self.task_row(f)
        if row is not None and state in ("jett", "runtime"):
            row["samples"] += 1
        elif row is not None and state == "waiting":
            row["waiting"] += 1
        # the contract: a deeper stack ends with <truncated-stack> and
        # increments truncated_stacks, whatever the sample's state
        if f["stack"] is not None:
            leaf = self.nodes[int(f["stack"])][1][-1]
            if leaf[0] == b"<runtime>" and leaf[1] == b"<truncated-stack>":
                c["truncated"] += 1
        if state != "jett":
            c[state] += 1
            if state == "waiting" and f["stack"] is not None:
                # issue 21: a waiting call site, the leaf statement of the
                # waiting sample's stack, kept as a hot line is (24 bytes
                # in the same index) but charged to no function; issue 35:
                # then its chain, the whole stack (24 bytes)
                chain = self.nodes[int(f["stack"])][1]
                leaf = chain[-1]
                site = self.hot_line(("waiting", leaf),
                                     span(f["span"]) if leaf[2] is not None else None)
                if site is not None:
                    chains = self.wait_chain.setdefault(site, {})
                    if chain not in chains:
                        if not self.index_take(24):
                            return
                        chains[chain] = 0
                    chains[chain] += 1
            return
        c["attributed"] += 1
        node = int(f["stack"])
        chain = self.nodes[node][1]
        leaf = chain[-1]
        b = self.fn_bucket(leaf)
        if b is not None:
            b[1] += 1
            sp = span(f["span"]) if leaf[2] is not None else None
            self.hot_line(leaf, sp)
        seen = set()
        outer = set()
        for k, ident in enumerate(chain):       # root first: outermost occurrences
            if ident not in seen:
                seen.add(ident)
                outer.add(k)
        calls = self.call_sites(node)
        for k in range(len(chain) - 1, -1, -1):  # buckets are created leaf first
            if k in outer:
                ident = chain[k]
                b = self.fn_bucket(ident)
                if b is not None:
                    b[0] += 1
                    if self.chain_bucket(chain[:k + 1]):
                        self.chain[chain[:k + 1]] += 1
            if k in calls:
                self.call_line(*calls[k])

    # ---- memory ----
    def mem_fits(self, n):
        return (self.used + self.rec.bytes() + self.wide_cap * 16 + self.line_cap * 8 + n <=
                self.budget_ret)

    def room(self, n):
        """jett-profile(7), Budgets: "the buckets come first": the first
        time n more bytes do not fit, every live-allocation record is
        released and the room is asked again."""
        if self.mem_fits(n):
            return True
        self.release()
        return self.mem_fits(n)

    def release(self):
        """"Every live-allocation record is released, the room they held
        goes back to the buckets"; "from then on no allocation is
        tracked"."""
        self.mem_limited = True
        self.live = {}
        self.rec = Records(self, self.tasks_on)
        self.wide, self.wide_cap = set(), 0

    def detail_room(self, n):
        """Room for a bucket, a line or the index's growth: "only when the
        buckets, lines and index alone fill the budget [...] is one
        refused.  From the first that does not fit on, no bucket or
        allocation line is made"."""
        if self.detail_full or not self.room(n):
            self.detail_full = True
            return False
        return True

    def line(self, ident, sp, n, create):
        """Allocation pressure at the leaf statement, when the leaf has a
        source and the span lies in it; a line and the growth of its
        index take room as a bucket does."""
        if ident is None or sp is None or ident[2] is None:
            return
        src = source_of(self, ident)
        if not sp[0] <= sp[1] <= len(src.text):
            return
        key = (ident, sp[0])
        if key not in self.lines:
            k = len(self.lines)
            after = 16 if self.line_cap == 0 else (self.line_cap * 2 if (k + 1) * 2 > self.line_cap
                                                    else self.line_cap)
            extra = 32 + (after * 8 if after != self.line_cap else 0)
            if not self.detail_room(extra):
                return
            self.used += 32
            self.line_cap = after
            self.lines[key] = [0, 0, sp[1]]
        self.lines[key][0] += n
        self.lines[key][1] += 1 if create else 0

    def wide_room(self, aid):
        """Room for the whole size of aid: its table grows as the table of
        older ids does (256 slots, doubling at three quarters full)."""
        if aid in self.wide:
            return True
        if (len(self.wide) + 1) * 4 > self.wide_cap * 3:
            new = self.wide_cap * 2 if self.wide_cap else 256
            if not self.mem_fits(new * 16):
                return False
            self.wide_cap = new
        self.wide.add(aid)
        return True

    def fits_total(self, n):
        """jett-profile(7): an event taking allocated_bytes past 2^64 - 1
        is refused (a collector error) and changes no number."""
        if self.mem["allocated"] + n > U64_MAX:
            self.overflow = True
            return False
        return True

    def drop_record(self, aid):
        del self.live[aid]
        self.rec.drop(aid)

    def site(self, ident):
        if ident is None:
            return None
        if ident not in self.sites:
            if not self.detail_room(56):
                return None
            self.used += 56
            self.sites[ident] = dict(count=0, allocated=0, resizes=0, freed=0, live=0)
        return self.sites[ident]

    def chain_bytes(self, chain, n):
        if chain is None:
            return
        if chain not in self.chain:
            if not self.detail_room(8):
                return
            self.used += 8
            self.chain[chain] = 0
        self.chain[chain] += n

    def pressure(self, ident, chain, n, create, sp):
        self.mem["allocated"] += n
        s = self.site(ident)
        if ident is not None:
            self.mem["attributed"] += n
        if s:
            s["allocated"] += n
            s["count" if create else "resizes"] += 1
        self.chain_bytes(chain, n)
        self.line(ident, sp, n, create)

    def track(self, aid, size, ident):
        if not self.rec.add(aid):
            return False
        self.live[aid] = [size, ident]
        return True

    def live_change(self, ident, delta):
        if ident is not None and ident in self.sites:
            self.sites[ident]["live"] += delta
        self.mem["live"] += delta
        if self.mem["live"] > self.mem["peak"]:
            self.mem["peak"] = self.mem["live"]
            self.peak_snapshot = {k: v["live"] for k, v in self.sites.items()}

    def rec_alloc(self, f):
        """An event for the sites, then, when they took it (an event past
        2^64 - 1 bytes is refused), for the tasks.  The creator of a
        resize's or free's allocation is the one its record names before
        the event."""
        before = (self.mem["count"], self.mem["resizes"])
        aid = int(f["id"])
        creator = self.rec.owner.get(aid) if aid in self.live else None
        self.rec_alloc_sites(f)
        taken = {"allocate": self.mem["count"] != before[0],
                 "resize": self.mem["resizes"] != before[1], "free": True}[f["op"]]
        if taken:
            self.task_alloc(f, creator)

    def task_alloc(self, f, creator):
        """An accepted event for the tasks: allocated bytes to the task
        that made it (initial sizes, growth), live bytes to the creator
        its record names (a record that was not kept names none)."""
        if not self.tasks_on:
            return
        row, aid, op = self.task_row(f), int(f["id"]), f["op"]
        if op == "allocate":
            if row is None:
                return
            row["allocated"] += int(f["new"])
            if aid in self.live:
                self.rec.owner[aid] = row
                row["live"] += int(f["new"])
            return
        if op == "resize":
            old, new = int(f["old"]), int(f["new"])
            if row is not None and new > old:
                row["allocated"] += new - old
            if creator is not None:
                creator["live"] += new - old
        elif creator is not None:
            creator["live"] -= int(f["old"])

    def rec_alloc_sites(self, f):
        node = None if f["stack"] is None else int(f["stack"])
        chain = None if node is None else self.nodes[node][1]
        ident = None if chain is None else chain[-1]
        if chain is not None:
            # the leaf function's chain runs from the root to its
            # outermost occurrence (DESIGN section 6), as for CPU samples
            chain = chain[:chain.index(ident) + 1]
        aid, op = int(f["id"]), f["op"]
        getattr(self, "mem_" + op)(f, aid, ident, chain)

    def mem_allocate(self, f, aid, ident, chain):
        size = int(f["new"])
        if not self.fits_total(size):
            return
        self.max_id = aid
        self.mem["count"] += 1
        self.pressure(ident, chain, size, True, span(f["span"]))
        kept = not self.mem_limited
        if kept and size >= WIDE:
            kept = self.wide_room(aid)
            if kept and not self.track(aid, size, ident):
                self.wide.discard(aid)
                kept = False
        elif kept:
            kept = self.track(aid, size, ident)
        if not kept:
            # the record of a new allocation did not fit
            self.release()
            return
        self.live_change(ident, size)

    def mem_resize(self, f, aid, ident, chain):
        old, new = int(f["old"]), int(f["new"])
        if not self.fits_total(max(new - old, 0)):
            return
        self.mem["resizes"] += 1
        if new > old:
            self.pressure(ident, chain, new - old, False, span(f["span"]))
        else:
            s = self.site(ident)
            if s:
                s["resizes"] += 1
        # a free or resize is taken as its event says once the records are
        # released (and, in a valid capture, names a live allocation)
        if aid not in self.live:
            return
        creator = self.live[aid][1]
        if new >= WIDE and not self.wide_room(aid):
            # no room for the whole size: the records are released
            self.release()
            return
        if new < WIDE:
            self.wide.discard(aid)
        if new < old:
            self.mem["freed"] += old - new
            if creator in self.sites:
                self.sites[creator]["freed"] += old - new
        self.live[aid][0] = new
        self.live_change(creator, new - old)

    def rec_fold(self, f):
        """jett-capture(5), Folds: \"a FOLD counts as its allocate and its
        free: one allocation of its size created at its site (count,
        allocated bytes, call chain and allocation line as an allocate's),
        and a free of the same size credited to the creation site (freed
        bytes); it changes no live bytes [...]; it takes no
        live-allocation record\".  Refused whole, as an allocate, when it
        would take allocated_bytes past 2^64 - 1."""
        node = None if f["stack"] is None else int(f["stack"])
        chain = None if node is None else self.nodes[node][1]
        ident = None if chain is None else chain[-1]
        if chain is not None:
            chain = chain[:chain.index(ident) + 1]
        size = int(f["size"])
        if not self.fits_total(size):
            return
        self.max_id = int(f["id"])
        self.mem["count"] += 1
        self.pressure(ident, chain, size, True, span(f["span"]))
        self.mem["freed"] += size
        if ident in self.sites:
            self.sites[ident]["freed"] += size
        # jett-profile(7), tasks: a task's allocated bytes are those its
        # events allocate, and a fold is its allocate (of the fold's
        # task); it is live at no peak nor at the end, so no task keeps it
        row = self.task_row(f) if self.tasks_on else None
        if row is not None:
            row["allocated"] += size

    def mem_free(self, f, aid, ident, chain):
        if aid not in self.live:
            return
        size, creator = self.live[aid]
        self.drop_record(aid)
        self.wide.discard(aid)
        self.mem["freed"] += size
        if creator in self.sites:
            self.sites[creator]["freed"] += size
        self.live_change(creator, -size)


def ident_key(ident):
    """Sort key of a function identity; None (unavailable) after values."""
    ns, name, src, decl = ident
    return (ns, name, (1,) if src is None else (0, src[0], src[1]),
            (1,) if decl is None else (0, decl[0]), (1,) if decl is None else (0, decl[1]))


def chain_text(chain):
    return " > ".join((i[0] + b"." + i[1]).decode("utf-8") for i in chain)


def status(m):
    f = m.finish
    # jett-profile(7), Status: a stream without FINISH breaks a rule of
    # jett-capture(5), a collector failure
    if f is None or f["collector_failure"] == "true" or (m.mode == "memory" and m.overflow):
        return "partial", "collector_failure"
    if f["termination"] == "interrupted":
        return "partial", "interrupted"
    if f["stack_limit"] == "true":
        return "partial", "stack_capture_limit"
    if m.mode == "cpu" and m.limited:
        return "partial", "cpu_metadata_limit"
    if m.mode == "memory" and m.mem_limited:
        return "partial", "retention_metadata_limit"
    return "complete", None


def decl_line(m, ident):
    if ident[2] is None or ident[3] is None:
        return "unavailable"
    src = next(s for s in m.sources if (s.origin, s.path) == ident[2])
    return src.line_of(ident[3][0]) + 1


def source_of(m, ident):
    return None if ident[2] is None else next(s for s in m.sources
                                             if (s.origin, s.path) == ident[2])


def entry_head(m, rank, ident):
    src = source_of(m, ident)
    return {"rank": rank, "namespace": ident[0].decode(), "function": ident[1].decode(),
            "path": src.path.decode() if src else "unavailable", "line": decl_line(m, ident)}


def top_chains(m, ident, weight_key):
    rows = [(c, w) for c, w in m.chain.items() if c[-1] == ident]
    rows.sort(key=lambda cw: (-cw[1], [ident_key(i) for i in cw[0]]))
    return [{weight_key: w, "chain": chain_text(c)} for c, w in rows[:3]]


def hot_rows(m, ident):
    src = source_of(m, ident)
    rows = [(k[1], v) for k, v in m.hot.items() if k[0] == ident]
    rows.sort(key=lambda r: (-r[1][0], (1,) if r[0] is None else (0, r[0])))
    out = []
    for start, (count, _) in rows[:3]:
        row = {"path": src.path.decode() if src else "unavailable", "line": "unavailable",
               "column": "unavailable", "self_samples": count, "code": "unavailable",
               "source_redacted": False}
        if src and start is not None:
            line = src.line_of(start)
            row["line"], row["column"] = line + 1, start - src.lines[line] + 1
            if "source_spans" in m.caps:
                row["code"], row["source_redacted"] = excerpt(src, line)
        out.append(row)
    return out


def call_rows(m, ident, den):
    """Issue 35: the function's call lines with samples, by inclusive
    samples then position, at most three; calls exact from CALLS; code as
    the hot lines'; the callee in most of the line's samples (ties by
    identity)."""
    src = source_of(m, ident)
    rows = [(k[1], sum(v.values()), v) for k, v in m.calls_line.items()
            if k[0] == ident and sum(v.values()) > 0]
    rows.sort(key=lambda r: (-r[1], r[0]))
    out = []
    for start, n, callees in rows[:3]:
        row = location(src, start)
        row.update({"inclusive_samples": n,
                    "calls": m.site_calls.get((ident, start), 0) if m.have_calls else
                    "unavailable",
                    "code": "unavailable", "source_redacted": False})
        if "source_spans" in m.caps:
            row["code"], row["source_redacted"] = excerpt(src, src.line_of(start))
        callee = min((c for c, w in callees.items() if w > 0),
                     key=lambda c: (-callees[c], ident_key(c)))
        row["callee"] = (callee[0] + b"." + callee[1]).decode()
        out.append(row)
    return out


def calls_of(m, ident):
    """Issue 35: exact calls from CALLS; unavailable without it, and for
    a function without a source."""
    if not m.have_calls or ident[2] is None:
        return "unavailable"
    return m.fn_calls.get(ident, 0)


def cpu_sugg(m, e, ident):
    """The contract's rules, with issue 21's naming: CPU_HIGH_SELF names
    the hottest reported line and its share of the self samples;
    CPU_CALLEE_DOMINATED the callee taking most samples of the dominant
    reported chain (the chain that continues it by one frame with the
    most samples, ties by identity) and its share of that chain's."""
    name = (ident[0] + b"." + ident[1]).decode()
    if e["self_samples"] * 2 >= e["inclusive_samples"]:
        text = "Inspect the reported hot lines in %s; self work accounts for at least half of " \
               "its samples" % name
        hot = e["hot_lines"][0] if e["hot_lines"] else None
        if hot and hot["line"] != "unavailable":
            text += ", the most at %s:%d (%d of %d self sample%s)" % (
                hot["path"], hot["line"], hot["self_samples"], e["self_samples"],
                "" if e["self_samples"] == 1 else "s")
        return [{"rule": "CPU_HIGH_SELF", "text": text + "."}]
    text = "Inspect the dominant call chain through %s; its callees account for more than " \
           "half of its samples" % name
    rows = [(c, w) for c, w in m.chain.items() if c[-1] == ident]
    if rows:
        dom, dw = min(rows, key=lambda cw: (-cw[1], [ident_key(i) for i in cw[0]]))
        callees = [(c[-1], w) for c, w in m.chain.items() if len(c) == len(dom) + 1 and
                   c[:-1] == dom and w > 0]
        if callees:
            callee, w = min(callees, key=lambda iw: (-iw[1], ident_key(iw[0])))
            text += "; %s takes %s%% of the samples on that chain" % (
                (callee[0] + b"." + callee[1]).decode(), two(hundredths(w, dw)))
    return [{"rule": "CPU_CALLEE_DOMINATED", "text": text + "."}]


def two(h):
    return "%d.%02d" % (h // 100, h % 100)


def mem_sugg(e, ident, thr, den):
    name = (ident[0] + b"." + ident[1]).decode()
    out = []
    if e["rank"] == 1:
        out.append({"rule": "MEM_ALLOCATION_PRESSURE", "text": "Reduce, reuse, or batch "
                    "allocations in %s; it allocated %s%% of attributed bytes."
                    % (name, two(hundredths(e["allocated_bytes"], den)))})
    r = e["retained_bytes"]
    if r != "unavailable" and r * 10000 >= thr * den:
        out.append({"rule": "MEM_RETAINED", "text": "Review the lifetime of allocations "
                    "created in %s; %d bytes (%s%%) were still live at exit."
                    % (name, r, two(hundredths(r, den)))})
    return out


def cpu_profile(m, p, st):
    c, h = m.cpu, m.hello
    # jett-profile(7), Status: "without FINISH the termination, the tick
    # counts and the durations are unavailable" (and the rate, of a wall
    # time unknown)
    na = "unavailable"
    f = m.finish or {"requested": na, "coalesced": na, "dropped": na, "wall_ns": 0,
                     "cpu_ns": None}
    wall = int(f["wall_ns"])
    tick = lambda k: na if f[k] == na else int(f[k])
    p["config"] = {"requested_rate_hz": int(h["rate_hz"]),
                   "threshold_basis_points": int(h["threshold_bp"]), "limit": int(h["limit"]),
                   "cpu_metadata_budget_bytes": m.budget_cpu}
    p["totals"] = {
        "requested_ticks": tick("requested"), "recorded_samples": c["recorded"],
        "attributed_samples": c["attributed"], "runtime_samples": c["runtime"],
        "waiting_samples": c["waiting"], "unavailable_samples": c["unavailable"],
        "coalesced_ticks": tick("coalesced"), "dropped_ticks": tick("dropped"),
        "truncated_stacks": c["truncated"],
        "observed_rate_hz": pct_value(div_round(c["recorded"] * 10**11, wall)) if wall else
        "unavailable",
        "wall_ms": div_round(wall, 10**6) if m.finish else na,
        "process_cpu_ms": "unavailable" if f["cpu_ns"] is None else div_round(int(f["cpu_ns"]), 10**6)}
    den, thr = c["attributed"], int(h["threshold_bp"])
    elig = [i for i, b in m.fn.items() if den and b[0] * 10000 >= thr * den]
    elig.sort(key=lambda i: (-m.fn[i][0], -m.fn[i][1], ident_key(i)))
    out = []
    for rank, ident in enumerate(elig[:int(h["limit"])], 1):
        e = entry_head(m, rank, ident)
        e.update({"inclusive_samples": m.fn[ident][0], "self_samples": m.fn[ident][1],
                  "cpu_percent": pct_value(hundredths(m.fn[ident][0], den)),
                  "self_percent": pct_value(hundredths(m.fn[ident][1], den)),
                  "calls": calls_of(m, ident),
                  "origin": origin_name(m, ident), "hot_lines": hot_rows(m, ident),
                  "call_lines": call_rows(m, ident, den),
                  "call_chains": top_chains(m, ident, "samples")})
        e["suggestions"] = suggestions(st, ident, lambda: cpu_sugg(m, e, ident))
        out.append(e)
    return out, len(elig)


def location(src, start):
    """path, line and column of a leaf statement start (unavailable
    without a source or a span)."""
    row = {"path": src.path.decode() if src else "unavailable", "line": "unavailable",
           "column": "unavailable"}
    if src and start is not None:
        line = src.line_of(start)
        row["line"], row["column"] = line + 1, start - src.lines[line] + 1
    return row


def waiting_rows(m):
    """Issue 21: the top three call sites of waiting samples, by samples,
    then function identity, then position (unknown last), each with its
    share of the waiting samples."""
    rows = [(k[0][1], k[1], v[0], k) for k, v in m.hot.items()
            if isinstance(k[0], tuple) and len(k[0]) == 2 and k[0][0] == "waiting"]
    rows.sort(key=lambda r: (-r[2], ident_key(r[0]), (1,) if r[1] is None else (0, r[1])))
    out = []
    for ident, start, n, key in rows[:3]:
        row = {"namespace": ident[0].decode(), "function": ident[1].decode()}
        row.update(location(source_of(m, ident), start))
        row["samples"] = n
        row["waiting_percent"] = pct_value(hundredths(n, m.cpu["waiting"]))
        # issue 35: the dominant chain of its samples, ties by the
        # identities in order; unavailable when no chain found room
        chains = m.wait_chain.get(key, {})
        row["chain"] = chain_text(min(chains, key=lambda c: (-chains[c], [ident_key(i) for i in c])))\
            if chains else "unavailable"
        out.append(row)
    return out


def line_rows(m, ident):
    """Issue 21: a memory entry's allocation lines, by allocated bytes,
    then allocations, both descending, then position; at most three,
    with the hot lines' redaction."""
    src = source_of(m, ident)
    rows = [(k[1], v) for k, v in m.lines.items() if k[0] == ident]
    rows.sort(key=lambda r: (-r[1][0], -r[1][1], r[0]))
    out = []
    for start, (n, count, _) in rows[:3]:
        row = location(src, start)
        row.update({"allocation_count": count, "allocated_bytes": n, "code": "unavailable",
                    "source_redacted": False})
        if "source_spans" in m.caps:
            row["code"], row["source_redacted"] = excerpt(src, src.line_of(start))
        out.append(row)
    return out


def suggestions(st, ident, rules):
    """The contract: a function without a source is emitted "with source
    and suggestions marked unavailable" -- in every profile; the rules
    run only on complete data ("omitted when required data is
    partial")."""
    if ident[2] is None:
        return "unavailable"
    return rules() if st == "complete" else []


def origin_name(m, ident):
    return "unavailable" if ident[2] is None else ["project", "dependency", "stdlib"][ident[2][0]]


def retained_known(m):
    """jett-profile(7), Status: retained values need every allocation
    tracked and the run's exit, which FINISH marks; a stream cut short
    keeps freed, peak and live-at-peak bytes, those of the events read."""
    return not m.mem_limited and m.finish is not None


def mem_profile(m, p, st):
    h, x, lim = m.hello, m.mem, m.mem_limited
    kept = retained_known(m)
    p["config"] = {"threshold_basis_points": int(h["threshold_bp"]), "limit": int(h["limit"]),
                   "retention_metadata_budget_bytes": m.budget_ret}
    na = "unavailable"
    p["totals"] = {"allocation_count": x["count"], "resize_count": x["resizes"],
                   "allocated_bytes": x["allocated"], "freed_bytes": na if lim else x["freed"],
                   "peak_live_bytes": na if lim else x["peak"],
                   "retained_bytes": x["live"] if kept else na,
                   "attributed_allocated_bytes": x["attributed"]}
    den, thr = x["attributed"], int(h["threshold_bp"])
    elig = [i for i, s in m.sites.items() if den and s["allocated"] * 10000 >= thr * den]
    elig.sort(key=lambda i: (-m.sites[i]["allocated"], -m.sites[i]["count"], ident_key(i)))
    out = []
    for rank, ident in enumerate(elig[:int(h["limit"])], 1):
        s = m.sites[ident]
        e = entry_head(m, rank, ident)
        e.update({"allocation_count": s["count"], "allocated_bytes": s["allocated"],
                  "allocation_percent": pct_value(hundredths(s["allocated"], den)),
                  "freed_bytes": na if lim else s["freed"],
                  "retained_bytes": s["live"] if kept else na,
                  "live_at_peak_bytes": na if lim else m.peak_snapshot.get(ident, 0),
                  "resize_count": s["resizes"], "origin": origin_name(m, ident),
                  "hot_lines": line_rows(m, ident),
                  "call_chains": top_chains(m, ident, "bytes")})
        e["suggestions"] = suggestions(st, ident, lambda: mem_sugg(e, ident, thr, den))
        out.append(e)
    return out, len(elig)


def task_rows(m):
    """jett-profile(7), Tasks: every TASK record, by samples (cpu) or
    allocated bytes (memory) descending, then number; at most limit."""
    cpu = m.mode == "cpu"
    rows = sorted(m.tasks, key=lambda t: (-(t["samples"] if cpu else t["allocated"]), t["task"]))
    out = []
    for t in rows[:int(m.hello["limit"])]:
        ident = t["ident"]
        src = source_of(m, ident)
        row = {"task": t["task"], "namespace": ident[0].decode(), "function": ident[1].decode(),
               "path": src.path.decode() if src else "unavailable", "line": decl_line(m, ident),
               "spawn_path": "unavailable", "spawn_line": "unavailable"}
        spawn_src = None if t["spawn"] is None else source_of(m, t["spawn"])
        if spawn_src is not None:
            row["spawn_path"] = spawn_src.path.decode()
            if t["at"] is not None and t["at"] <= len(spawn_src.text):
                row["spawn_line"] = spawn_src.line_of(t["at"]) + 1
        if cpu:
            row.update({"samples": t["samples"], "waiting_samples": t["waiting"]})
        else:
            row.update({"allocated_bytes": t["allocated"],
                        "retained_bytes": t["live"] if retained_known(m) else "unavailable"})
        out.append(row)
    return out


def holder_key(h):
    """Holders by namespace, name, source, declaration start and end,
    unavailable after every value; no holder after every holder."""
    if h is None:
        return (1,)
    ns, name, src, decl, _ = h
    return (0, ns, name, (1,) if src is None else (0, src[0], src[1]),
            (1,) if decl is None else (0, decl[0]), (1,) if decl is None else (0, decl[1]))


def func_key(ident):
    return (1,) if ident is None else (0, ident_key(ident))


def holder_place(holder):
    """jett-profile(7): holder_path and holder_line, the path of the
    binding's source and the first line of its declaration, each
    unavailable when unknown or without a holder."""
    na = "unavailable"
    if holder is None or holder[2] is None:
        return na, na
    src, decl = holder[4], holder[3]
    return src.path.decode(), na if decl is None else src.line_of(decl[0]) + 1


def retained_rows(m):
    """The rows grouped by holder and creation-site function (rows of one
    group add up), by retained bytes descending then holder then function;
    at most ten; then the remainder row when the rows leave bytes or
    objects out of the live allocations (always, with unavailable
    numbers, when the total is unavailable)."""
    groups = {}
    for holder, ident, nbytes, objects in m.walk_rows:
        key = (None if holder is None else holder[:4], ident)
        g = groups.setdefault(key, [holder, ident, 0, 0])
        g[2] += nbytes
        g[3] += objects
    rows = sorted(groups.values(), key=lambda g: (-g[2], holder_key(g[0]), func_key(g[1])))[:10]
    na, out = "unavailable", []
    for holder, ident, nbytes, objects in rows:
        row = {"holder": na if holder is None else (holder[0] + b"." + holder[1]).decode()}
        row["holder_path"], row["holder_line"] = holder_place(holder)
        row.update({"namespace": na, "function": na, "path": na, "line": na})
        if ident is not None:
            head = entry_head(m, 0, ident)
            row.update({k: head[k] for k in ("namespace", "function", "path", "line")})
        row.update({"retained_bytes": nbytes, "objects": objects})
        out.append(row)
    rest = {"holder": "<remainder>", "holder_path": na, "holder_line": na, "namespace": na,
            "function": na, "path": na, "line": na, "retained_bytes": na, "objects": na}
    if not retained_known(m):
        return out + [rest]
    left_bytes = m.mem["live"] - sum(r["retained_bytes"] for r in out)
    left_objects = len(m.live) - sum(r["objects"] for r in out)
    if left_bytes or left_objects:
        rest.update({"retained_bytes": left_bytes, "objects": left_objects})
        out.append(rest)
    return out


def lead(kind, task, ns, name, place, value, whole, of):
    """One row of leads: the place is (path, line, column); the percent is
    of `whole`, rounded as every percentage."""
    return {"kind": kind, "task": task, "namespace": ns, "name": name, "path": place[0],
            "line": place[1], "column": place[2], "value": value,
            "unit": "samples" if kind in ("task", "waiting", "self") else "bytes",
            "percent": pct_value(hundredths(value, whole)), "of": of}


def entry_place(e):
    """Where an entry points: its first hot line, else the first line of
    its declaration with column unavailable."""
    if e["hot_lines"]:
        h = e["hot_lines"][0]
        return h["path"], h["line"], h["column"]
    return e["path"], e["line"], "unavailable"


def cpu_leads(m, p):
    """jett-profile(7), Leads, CPU: task, else waiting; then self."""
    out, na = [], "unavailable"
    tasks = p.get("tasks", [])
    every = sum(t["samples"] for t in m.tasks) if m.tasks_on else 0
    if m.tasks_on and len(m.tasks) >= 2 and tasks and tasks[0]["samples"] * 3 > every * 2:
        t = tasks[0]
        out.append(lead("task", t["task"], t["namespace"], t["function"],
                        (t["path"], t["line"], na), t["samples"], every, "task_samples"))
    elif p["waiting"] and p["totals"]["waiting_samples"] >= p["totals"]["attributed_samples"]:
        w = p["waiting"][0]
        out.append(lead("waiting", na, w["namespace"], w["function"],
                        (w["path"], w["line"], w["column"]), w["samples"],
                        p["totals"]["waiting_samples"], "waiting_samples"))
    best = None
    for e in p["bottlenecks"]:  # in rank order: the first among equals
        if e["self_samples"] > 0 and (best is None or e["self_samples"] > best["self_samples"]):
            best = e
    if best is not None:
        out.append(lead("self", na, best["namespace"], best["function"], entry_place(best),
                        best["self_samples"], p["totals"]["attributed_samples"],
                        "attributed_samples"))
    return out


def holder_lead(m, p):
    """The holder whose rows, all of them, hold the most bytes at exit;
    ties in holder order; no holder is never a lead; none when
    retained_bytes is below the threshold's share of a known, positive
    peak_live_bytes."""
    if p["retained_status"] == "unavailable" or not retained_known(m):
        return None
    peak, kept = p["totals"]["peak_live_bytes"], p["totals"]["retained_bytes"]
    if peak != "unavailable" and peak > 0 and kept * 10000 < int(m.hello["threshold_bp"]) * peak:
        return None
    sums = {}
    for holder, _, nbytes, _ in m.walk_rows:
        if holder is not None:
            s = sums.setdefault(holder[:4], [holder, 0])
            s[1] += nbytes
    if not sums:
        return None
    holder, nbytes = min(sums.values(), key=lambda s: (-s[1], holder_key(s[0])))
    if nbytes == 0:
        return None
    path, line = holder_place(holder)
    return lead("holder", "unavailable", holder[0].decode(), holder[1].decode(),
                (path, line, "unavailable"), nbytes, m.mem["live"], "retained_bytes")


def mem_leads(m, p):
    """jett-profile(7), Leads, memory: holder, peak, allocated."""
    out, na, t = [], "unavailable", p["totals"]
    h = holder_lead(m, p)
    if h:
        out.append(h)
    peak, kept = t["peak_live_bytes"], t["retained_bytes"]
    thr = int(m.hello["threshold_bp"])
    if peak != na and peak > 0 and (h is None or (peak - kept) * 10000 >= thr * peak):
        at_peak = [(i, v) for i, v in m.peak_snapshot.items() if v > 0 and i in m.sites]
        if at_peak:
            ident, v = min(at_peak, key=lambda iv: (-iv[1], ident_key(iv[0])))
            head = entry_head(m, 0, ident)
            out.append(lead("peak", na, head["namespace"], head["function"],
                            (head["path"], head["line"], na), v, peak, "peak_live_bytes"))
    if p["bottlenecks"] and p["bottlenecks"][0]["allocated_bytes"] > 0:
        e = p["bottlenecks"][0]
        out.append(lead("allocated", na, e["namespace"], e["function"], entry_place(e),
                        e["allocated_bytes"], t["attributed_allocated_bytes"],
                        "attributed_allocated_bytes"))
    return out


def leads(m, p):
    """jett-profile(7), Leads: unavailable where a budget refused a bucket
    or a stack, which may have left the place out."""
    if (m.finish and m.finish["stack_limit"] == "true") or (m.mode == "cpu" and m.limited) or \
            (m.mode == "memory" and m.detail_full):
        return "unavailable"
    return (cpu_leads if m.mode == "cpu" else mem_leads)(m, p)


def profile(m):
    st, reason = status(m)
    p = {"schema": "jett.profile.v1", "mode": m.mode, "status": st}
    if reason:
        p["partial_reason"] = reason
    p["termination"] = m.finish["termination"] if m.finish else "unavailable"
    p["backend"] = m.hello["backend"].decode()
    p["coverage"] = "jett_runtime_threads" if m.mode == "cpu" else "jett_heap"
    entries, n = (cpu_profile if m.mode == "cpu" else mem_profile)(m, p, st)
    p["bottlenecks"] = entries
    p["eligible_bottlenecks"], p["emitted_bottlenecks"] = n, len(entries)
    p["truncated_bottlenecks"] = n - len(entries)
    p["leads"] = None  # its place in the field order; filled from the rows below
    if m.mode == "cpu":
        p["waiting"] = waiting_rows(m)
    elif not m.walk_closed or m.finish is None:
        # no walk in the capture, or none that the run's exit closed
        # (jett-profile(7), Retained holders)
        p["retained_status"], p["retained"] = "unavailable", "unavailable"
    else:
        p["retained_status"] = "partial" if m.walk_cut or m.walk_refused else "complete"
        p["retained"] = retained_rows(m)
    if m.tasks_on:
        p["tasks"] = task_rows(m)
    p["leads"] = leads(m, p)
    p["capabilities"] = {c: c in m.caps for c in CAPS}
    return {"profile": p}


if __name__ == "__main__":
    print(json.dumps(profile(Model(parse(sys.argv[1]))), ensure_ascii=False, indent=1))
