#!/usr/bin/env python3
"""random_capture: writes random, valid captures in the text form.

    random_capture.py SEED > CAPTURE.jcap.txt

Both modes; random sources (multibyte, control and bidirectional
characters, long lines, literal/comment/secret spans), namespaces and
names chosen from small sets so identities tie (one name holds controls
to escape), runtime buckets without source, stack tries with recursion, sizes near 2^40 and 2^64 (totals past 2^64 - 1 too),
samples in every state (waiting ones on stacks, truncated
ones too), runs with tasks (TASK records, events of several tasks, frees
by another task than the creator's), source-less functions in partial (interrupted) profiles, allocation churn with zero sizes
and frees on several workers, id gaps that slide the daemon's window of
recent ids, thresholds, limits and budgets small enough to run out (in
memory mode, now and then one the buckets alone fill); CPU
stacks with call sites (repeated, so that call lines recur and one site
reaches several callees; some outside the caller's source) and CALLS
records (one or two, adding up) after the last EVENTS; memory captures
mostly end with a walk of retained holders (RETAINED), cut short now and
then; versions 1, 2 and 3 (compact ALLOC entries), and in version 3 folds of
allocations freed before the next new peak."""
import random, sys

T, TOP = 2**40, 2**64 - 1
# sizes at the live record's 40-bit edge and near 2^64, now and then
NEAR40, NEAR64 = [T - 2, T - 1, T, T + 1], [2**63, TOP - 1, TOP]
HUGE = NEAR40 + NEAR64

# a right-to-left override and a zero-width space too, which reports and
# exports show escaped (jett-profile(7), Escaped text)
CHARS = list("abcdefgh xyz(){}=+-*/;,.:") + ["\u00e9", "\u00fc", "\u4e2d", "\t", "\x01",
                                             "\u202e", "\u200b"]


def esc(s):
    out = []
    for b in s.encode("utf-8"):
        if b == 0x22:
            out.append('\\"')
        elif b == 0x5c:
            out.append("\\\\")
        elif b == 0x0a:
            out.append("\\n")
        elif b < 0x20 or b >= 0x7f:
            out.append("\\x%02x" % b)
        else:
            out.append(chr(b))
    return '"' + "".join(out) + '"'


def source(r, sid):
    """Text lines of random characters; spans on char boundaries within a
    line, blanked to spaces as the agent sends them."""
    lines, spans, text = [], [], ""
    for _ in range(r.randint(1, 8)):
        n = r.choice([0, 3, 10, 30, 200])
        chars = [r.choice(CHARS) for _ in range(r.randint(0, n))]
        base = len(text.encode("utf-8"))
        pos, k = [], 0
        for c in chars:
            pos.append(base + k)
            k += len(c.encode("utf-8"))
        end_of_line = base + k
        i = 0
        while i < len(chars) and r.random() < 0.4:
            a = r.randint(i, len(chars))
            b = r.randint(a, min(len(chars), a + 6))
            kind = r.choice(["literal", "comment", "secret"])
            at = lambda j: pos[j] if j < len(chars) else end_of_line
            start, stop = at(a), at(b)
            spans.append("%s:%d-%d" % (kind, start, stop))
            # a literal or comment inside a secret expression (JETT.md's
            # env("API_TOKEN")), at its start, inside it, or the whole of it
            if kind == "secret" and b > a and r.random() < 0.6:
                c = r.randint(a, b - 1)
                d = r.randint(c + 1, b)
                if r.random() < 0.2:
                    c, d = a, b
                spans.append("%s:%d-%d" % (r.choice(["literal", "comment"]), at(c), at(d)))
            for j in range(a, b):
                chars[j] = " " * len(chars[j].encode("utf-8"))
            i = b + 1
        text += "".join(chars) + "\n"
    origin = r.choice(["project", "dependency", "stdlib"])
    path = {"project": "src/f%d.jett", "dependency": "dep/lib/f%d.jett",
            "stdlib": "stdlib/f%d.jett"}[origin] % sid
    return origin, path, text, spans


def calls_record(r, funcs, used_sites, text_len):
    """A CALLS line: some functions and some of the call sites the stacks
    used (with others in the callers' sources), sorted, counts that add
    up to less than 2^64 - 1 over the records of one capture."""
    fns = sorted(r.sample(range(len(funcs)), r.randint(0, len(funcs))))
    fn_items = ["%d:%d" % (f, r.choice([0, 1, 7, 300, r.randint(0, 2**40), 2**61])) for f in fns]
    sites = set(s for s in used_sites if r.random() < 0.7)
    for f in range(len(funcs)):
        n = text_len(f)
        if n is not None and r.random() < 0.2:
            a = r.randint(0, n)
            sites.add((f, (a, r.randint(a, n))))
    site_items = ["%d:%d-%d:%d" % (f, a, b, r.choice([1, 2, 300, r.randint(0, 2**40), 2**61]))
                  for f, (a, b) in sorted(sites)]
    return "CALLS functions=%s sites=%s" % (",".join(fn_items) or "-", ",".join(site_items) or "-")


def walk(r, srcs, live, creator):
    """RETAINED records of a walk over the live allocations: each live
    object credited to one random holder (names from small sets, so that
    identities tie; a holder may come in several records) or to none;
    rows per creation-site function (a live object's allocate's stack
    leaf).  Now and then the budget cuts it: the records end early, the
    last one incomplete and only part of its objects in it."""
    holders = []
    for _ in range(r.randint(0, 5)):
        src = r.choice([None] + list(range(len(srcs))))
        decl = "-"
        if src is not None and r.random() < 0.8:
            n = len(srcs[src][2].encode("utf-8"))
            a = r.randint(0, n)
            decl = "%d-%d" % (a, r.randint(a, n))
        holders.append((r.choice(["a", "b", "\u00fc"]), r.choice(["cache", "rows", "x"]),
                        src, decl))
    owned = {h: [] for h in range(len(holders))}
    unowned = []
    for aid in sorted(live):
        h = r.randrange(len(holders) + 1) if holders else len(holders)
        (owned[h] if h < len(holders) else unowned).append(aid)

    def rows(ids):
        by = {}
        for aid in ids:
            g = by.setdefault(creator[aid], [0, 0])
            g[0] += live[aid]
            g[1] += 1
        return ",".join("%s:%d:%d" % ("-" if f is None else f, b, n)
                        for f, (b, n) in sorted(by.items(), key=lambda kv: (kv[0] is None,
                                                                            kv[0] or 0))) or "-"

    out, cut = [], r.random() < 0.25
    order = [h for h in range(len(holders)) if owned[h]]
    for k, h in enumerate(order):
        ns, name, src, decl = holders[h]
        ids = owned[h]
        last = cut and k == len(order) - 1
        if last:
            ids = ids[:r.randint(1, len(ids))]
        parts = [ids] if len(ids) < 2 or r.random() < 0.7 else [ids[:1], ids[1:]]
        for i, part in enumerate(parts):
            out.append("RETAINED namespace=%s name=%s source=%s decl=%s rows=%s complete=%s"
                       % (esc(ns), esc(name), "-" if src is None else src, decl, rows(part),
                          "false" if last and i == len(parts) - 1 else "true"))
    cut = cut and bool(order)
    out.append("RETAINED namespace=- name=- source=- decl=- rows=%s complete=%s"
               % ("-" if cut else rows(unowned), "false" if cut else "true"))
    return out


def folds(events, r):
    """jett-capture(5), Folds: an allocation may fold when no event from
    its allocate (included) to its free raised the live bytes above their
    peak so far, the free is at most 255 sequences after the allocate and
    the allocation was not resized.  Live bytes are those the events hold
    (an event refused for passing 2^64 - 1 holds none).  Returns {index of
    the allocate: index of its free} for a random part of those that may."""
    live, peak, peak_at = 0, 0, []  # peak_at[i]: event i made a new peak
    sizes, start = {}, {}
    for k, (op, seq, aid, old, new, _, _, _, _, ok) in enumerate(events):
        if op == "allocate" and ok:
            sizes[aid], start[aid] = new, k
            live += new
        elif op == "resize" and ok and aid in sizes:
            live += new - sizes[aid]
            sizes[aid] = new
            start.pop(aid, None)  # resized: it stays an allocate
        elif op == "free" and aid in sizes:
            live -= sizes.pop(aid)
        peak_at.append(live > peak)
        peak = max(peak, live)
    out = {}
    for k, (op, seq, aid, *_rest) in enumerate(events):
        if op != "free" or aid not in start:
            continue
        i = start.pop(aid)
        if seq - events[i][1] <= 255 and not any(peak_at[i:k]) and r.random() < 0.7:
            out[i] = k
    return out


def alloc_lines(events, fold, r):
    """The events as ALLOC lines, with some allocations as FOLD lines when
    `fold`."""
    folded = folds(events, r) if fold else {}
    dropped = set(folded.values())
    lines = []
    for k, (op, seq, aid, old, new, task, thread, st, sp, _) in enumerate(events):
        if k in dropped:
            continue
        if k in folded:
            lines.append("  FOLD seq=%d id=%d size=%d free_seq=%d task=%s actor=- thread=%d "
                         "stack=%s span=%s" % (seq, aid, new, events[folded[k]][1], task, thread,
                                               st, sp))
        else:
            lines.append("  ALLOC seq=%d op=%s id=%d old=%s new=%s task=%s actor=- thread=%d "
                         "stack=%s span=%s" % (seq, op, aid, "-" if old is None else old,
                                               "-" if new is None else new, task, thread, st, sp))
    return lines


def capture(seed):
    """The text form of the capture for `seed`."""
    r = random.Random(seed)
    mode = r.choice(["cpu", "memory"])
    out = []
    srcs = [source(r, i) for i in range(r.randint(1, 3))]
    thr = r.choice([0, 1, 500, 1000, 3333, 5000, 10000, r.randint(0, 10000)])
    cpu_budget = r.choice([33554432, 33554432, r.randint(24, 600)])
    ret_budget = r.choice([67108864, 67108864, r.randint(4096, 4400)])
    # now and then a budget the buckets alone fill (jett-profile(7),
    # Budgets), drawn apart so that the captures of every other seed
    # stay what they were
    tiny = random.Random("budget %d" % seed)
    if mode == "memory" and tiny.random() < 0.15:
        ret_budget = tiny.randint(200, 2000)
    caps = "cpu_tick_source,safe_stack_capture,source_spans" if mode == "cpu" else \
        "source_spans,jett_heap_allocation_hooks,free_and_resize_events"
    # a run with tasks: TASK records, and events of several tasks and
    # workers (a run without them may still carry task numbers, which
    # then count for nothing)
    tasks = r.random() < 0.4
    if tasks:
        caps = caps.replace("safe_stack_capture,", "safe_stack_capture,task_attribution,") \
            if mode == "cpu" else "task_attribution," + caps
    # jett-capture(5): version 3 packs ALLOC lines as compact entries and
    # has folds; versions 1 and 2 the 58-byte entries, and TASK entries
    # need version 2 or later
    if tasks:
        version = r.choice([2, 3, 3])
    else:
        version = r.choice([1, 2, 3, 3]) if mode == "memory" else r.choice([1, 2, 3])
    out.append("HELLO version=%d mode=%s rate_hz=%d threshold_bp=%d limit=%d cpu_budget=%d "
               "retention_budget=%d stack_budget=16777216 backend=\"random\" capabilities=%s "
               "colour=false" % (version, mode, 1000 if mode == "cpu" else 0, thr, r.randint(1, 10),
                                 cpu_budget, ret_budget, caps))
    for i, (origin, path, text, spans) in enumerate(srcs):
        out.append("SOURCE id=%d origin=%s path=%s spans=%s text=%s"
                   % (i, origin, esc(path), ",".join(spans) or "-", esc(text)))
    funcs = []
    for i in range(r.randint(1, 10)):
        if r.random() < 0.2:
            ns, name, src = "<runtime>", r.choice(["<unavailable-symbol>", "<truncated-stack>"]), None
        else:
            ns = r.choice(["a", "b", "a.b", "Z", "\u00fc"])
            name = r.choice(["f", "g", "dup", "<init>", "e\u202ev\x1b[1m"])
            src = r.randrange(len(srcs))
        decl = "-"
        if src is not None and r.random() < 0.8:
            n = len(srcs[src][2].encode("utf-8"))
            a = r.randint(0, n)
            decl = "%d-%d" % (a, r.randint(a, n))
        funcs.append(src)
        out.append("FUNC id=%d namespace=%s function=%s source=%s decl=%s"
                   % (i, esc(ns), esc(name), "-" if src is None else src, decl))
    out.append("EVENTS")
    n_tasks = r.randint(1, 12) if tasks else 0
    for t in range(1, n_tasks + 1):
        spawn = r.randrange(len(funcs)) if t > 1 and r.random() < 0.9 else None
        site = "-"
        if spawn is not None and funcs[spawn] is not None and r.random() < 0.85:
            n = len(srcs[funcs[spawn]][2].encode("utf-8"))
            a = r.randint(0, n)
            site = "%d-%d" % (a, r.randint(a, n))
        out.append("  TASK task=%d func=%d spawn_func=%s site=%s"
                   % (t, r.randrange(len(funcs)), "-" if spawn is None else spawn, site))

    # now and then one task has most events: the busy task of a pipeline
    busy = r.randint(1, n_tasks) if tasks and r.random() < 0.3 else None

    def task():
        """An event's task: one described, none, or (without tasks) any."""
        if r.random() < 0.15:
            return "-"
        if busy is not None and r.random() < 0.7:
            return str(busy)
        return str(r.randint(1, n_tasks)) if tasks else str(r.randint(1, 3))
    depth, stack_path_funcs, used_sites = [], [], set()

    def text_len(func):
        return None if funcs[func] is None else len(srcs[funcs[func]][2].encode("utf-8"))

    def call_site(caller):
        """A call in the caller's source, mostly one of a few so that sites
        recur; now and then none, or one past the end of the source."""
        n = text_len(caller)
        if n is None or r.random() < 0.2:
            return None
        if r.random() < 0.1:
            return (n + 1, n + 3)
        a = r.choice([0, 1, 2, min(n, 5)]) if r.random() < 0.7 else r.randint(0, n)
        a = min(a, n)
        return (a, r.randint(a, n))
    for i in range(r.randint(1, 30)):
        parent = r.choice([None, None] + list(range(i)) + [i - 1] * 3) if i else None
        if parent is not None and depth[parent] >= 128:
            parent = None
        depth.append(1 if parent is None else depth[parent] + 1)
        func = r.randrange(len(funcs))
        if parent is not None and r.random() < 0.25:  # self or mutual recursion
            func = r.choice(stack_path_funcs[parent])
        stack_path_funcs.append((stack_path_funcs[parent] if parent is not None else []) + [func])
        site = None if parent is None or mode != "cpu" else call_site(stack_path_funcs[parent][-1])
        if site and site[1] <= (text_len(stack_path_funcs[parent][-1]) or 0):
            used_sites.add((stack_path_funcs[parent][-1], site))
        out.append("  STACK id=%d parent=%s func=%d site=%s"
                   % (i, "-" if parent is None else parent, func,
                      "-" if site is None else "%d-%d" % site))
    stack_funcs = [int(l.split("func=")[1].split()[0]) for l in out if l.startswith("  STACK")]
    seq = 0
    if mode == "cpu":
        # a quarter of the runs mostly wait
        states = ["jett"] * 6 + ["runtime", "waiting", "unavailable"] if r.random() < 0.75 \
            else ["jett"] * 2 + ["waiting"] * 6 + ["runtime", "unavailable"]
        for _ in range(r.randint(0, 120)):
            seq += 1
            state = r.choice(states)
            # waiting samples may keep their stack (a truncated one too)
            stack = r.randrange(len(depth)) if state == "jett" or \
                (state == "waiting" and r.random() < 0.6) else None
            sp = "-"
            if stack is not None and funcs[stack_funcs[stack]] is not None and r.random() < 0.85:
                n = len(srcs[funcs[stack_funcs[stack]]][2].encode("utf-8"))
                a = r.randint(0, n)
                sp = "%d-%d" % (a, r.randint(a, n))
            out.append("  CPU_SAMPLE seq=%d tick=%d task=%s actor=- thread=%d state=%s stack=%s "
                       "span=%s" % (seq, seq, task(), r.randint(0, 3), state,
                                    "-" if stack is None else stack, sp))
    else:
        events = []
        live, next_id, total, creator = {}, 1, 0, {}
        huge = r.random() < 0.5  # this capture has sizes near 2^40 and 2^64
        level = r.random() < 0.5
        last_resized = None
        for _ in range(r.randint(0, 150)):
            seq += 1
            stack = r.randrange(len(depth)) if r.random() < 0.9 else None
            st = "-" if stack is None else stack
            # a leaf statement, mostly one of a few, so that lines repeat
            sp = "-"
            if stack is not None and funcs[stack_funcs[stack]] is not None and r.random() < 0.8:
                n = len(srcs[funcs[stack_funcs[stack]]][2].encode("utf-8"))
                a = r.randint(0, min(n, 6))
                sp = "%d-%d" % (a, r.randint(a, n))
            # churn, or (now and then) a level where frees keep up with
            # allocations, so that the live bytes stay below their peak and
            # allocations can fold
            ops = ["allocate"] * 2 + ["resize", "free", "free"] if level and len(events) > 20 \
                else ["allocate"] * 3 + ["resize", "free"]
            op = r.choice(ops) if live else "allocate"
            if op == "allocate":
                size = r.choice([0, 1, 8, 64, 100, 4096])
                if huge and r.random() < 0.15:
                    size = r.choice(NEAR40 * 6 + NEAR64)
                # past 2^64 - 1 bytes in all the daemon refuses the event:
                # nothing refers to the id again
                fits = total + size <= TOP
                if fits:
                    live[next_id] = size
                    creator[next_id] = None if stack is None else stack_funcs[stack]
                    total += size
                events.append(("allocate", seq, next_id, None, size, task(), r.randint(0, 2), st,
                               sp, fits))
                # mostly consecutive ids; a gap past the 256-id window moves
                # the live records it passes to the table of older ids
                next_id += r.choice([1] * 12 + [3, 100, 300])
            else:
                aid = r.choice(sorted(live))
                # now and then the allocation resized last, again (a string
                # built by appending: RESIZE_AGAIN entries in version 3)
                if op == "resize" and last_resized in live and r.random() < 0.5:
                    aid = last_resized
                old = live[aid]
                if op == "free":
                    del live[aid]
                    events.append(("free", seq, aid, old, None, task(), r.randint(0, 2), st, sp,
                                   True))
                else:
                    new = r.choice([0, 2, 50, old + 10, max(0, old - 5)])
                    if huge and r.random() < 0.3:
                        new = r.choice(NEAR40 * 3 + NEAR64 + [T - 1 - old % 3, old + T,
                                                              max(0, old - T)])
                    new = min(new, TOP)
                    fits = total + max(new - old, 0) <= TOP  # else refused: the size stays
                    if fits:
                        live[aid] = new
                        total += max(new - old, 0)
                    events.append(("resize", seq, aid, old, new, task(), r.randint(0, 2), st, sp,
                                   fits))
                    last_resized = aid
        out.extend(alloc_lines(events, version == 3 and r.random() < 0.8, r))
    out.append("END")
    if mode == "cpu":
        for _ in range(r.choice([0, 1, 1, 2])):
            out.append(calls_record(r, funcs, used_sites, text_len))
    if mode == "memory" and r.random() < 0.75:
        out += walk(r, srcs, live, creator)
    coal, drop = r.randint(0, 5), r.randint(0, 5)
    req = (seq + coal + drop) if mode == "cpu" else 0
    if mode == "memory":
        coal = drop = 0
    out.append("FINISH termination=%s wall_ns=%d cpu_ns=%s requested=%d coalesced=%d dropped=%d "
               "collector_failure=%s stack_limit=%s"
               % (r.choice(["returned"] * 3 + ["runtime_error", "interrupted", "interrupted"]),
                  r.choice([0, 1, 999999, 4000000, 123456789]),
                  r.choice(["-", "1500000", "2499999"]), req, coal, drop,
                  "true" if r.random() < 0.05 else "false",
                  "true" if r.random() < 0.05 else "false"))
    return "\n".join(out) + "\n"


def cut(seed):
    """Whether the packed capture of `seed` is cut short, as `head -c`
    cuts one (jett-profile(7), Status: a stream without FINISH): None, or
    where to cut it, as a fraction of the bytes from the end of its HELLO
    frame to the start of its FINISH frame (0 keeps HELLO alone; a cut
    may fall inside a frame).  One capture in eight."""
    r = random.Random("cut %d" % seed)
    return r.random() if r.random() < 0.125 else None


if __name__ == "__main__":
    sys.stdout.write(capture(int(sys.argv[1])))
