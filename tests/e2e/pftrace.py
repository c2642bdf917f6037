"""A reader of Perfetto protobuf traces (.pftrace), written from the field
numbers of Perfetto's published protos (trace.proto, trace_packet.proto,
track_descriptor.proto, track_event.proto, debug_annotation.proto,
interned_data.proto, clock_snapshot.proto), and the checks a trace must pass
to load as intended: tracks form a tree, slices nest per track, names resolve
through the sequence's interned data, and every flow connects when its events
are processed in time order.

The rules of Perfetto's importer and UI (trace_processor and ui/ at ec5d16b,
read from their source) that a trace must also pass:
 - flows (flow_tracker.cc): an arrow is drawn from whichever of its two slices
   starts first, whatever flow_ids and terminating_flow_ids say, so a flow
   must never end on a slice that began before its source (an END event's
   terminating flows bind to the slice it ends);
 - track merging (track_event_tracker.cc): sibling tracks of one name are
   merged into one unless sibling_merge_behavior is NONE (2), so tracks that
   must stay apart (lanes) say NONE;
 - scopes: a track with a ThreadDescriptor is a thread's, one with a
   ProcessDescriptor a process's; a child of either is not nested under it
   but becomes a top-level track of that thread or process; below a plain
   track, children nest;
 - order (ui/src/plugins/dev.perfetto.TrackEvent, ProcessThreadGroups, the
   stdlib's viz.summary.track_event): nested children by their parent's
   child_ordering (EXPLICIT: sibling_order_rank; else by name); top-level
   tracks of a thread, a process or the trace by name; processes and threads
   by rank only when the root descriptor (uuid 0) sets process_ordering /
   thread_ordering EXPLICIT (else by slice count and name, main thread and
   tid).  The order the ranks ask for must be the order Perfetto shows;
 - clocks: the first ClockSnapshot relates BOOTTIME (6), trace_processor's
   trace clock, to MONOTONIC (3), the events' (without it every load counts
   clock_sync_unrelatable_clock_domains, an error); BOOTTIME is never behind
   MONOTONIC; clocks 64..127 are the sequence's;
 - names: the UI shows a process's pid and a thread's tid after its name, so
   process_name and thread_name do not repeat them; flow ids stay below bit
   63 (the flow table reads them as int64).
asys's own rule on top: slices under a process are on a thread's tracks."""
import gzip
import struct

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4
MONOTONIC, BOOTTIME = 3, 6
SEQ_INCREMENTAL_STATE_CLEARED = 1
EXPLICIT, CHRONOLOGICAL = 3, 2  # ChildTracksOrdering
MERGE_NONE = 2  # SiblingMergeBehavior
ORDERING_EXPLICIT = 1  # ProcessOrdering, ThreadOrdering


def _varint(buf, pos):
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7f) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError('varint too long')


def fields(buf):
    """Yields (field number, wire type, value) of a message."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == VARINT:
            value, pos = _varint(buf, pos)
        elif wire == FIXED64:
            value = int.from_bytes(buf[pos:pos + 8], 'little')
            pos += 8
        elif wire == LEN:
            size, pos = _varint(buf, pos)
            value = bytes(buf[pos:pos + size])
            if len(value) != size:
                raise ValueError('truncated field %d' % field)
            pos += size
        elif wire == FIXED32:
            value = int.from_bytes(buf[pos:pos + 4], 'little')
            pos += 4
        else:
            raise ValueError('unknown wire type %d' % wire)
        if pos > len(buf):
            raise ValueError('truncated message')
        yield field, wire, value


def _one(buf, wanted):
    found = {}
    for field, _, value in fields(buf):
        if field in wanted:
            found[field] = value
    return found


def _repeated_fixed64(wire, value):
    if wire == FIXED64:
        return [value]
    return [int.from_bytes(value[i:i + 8], 'little') for i in range(0, len(value), 8)]


def _repeated_varint(wire, value):
    if wire == VARINT:
        return [value]
    out, pos = [], 0
    while pos < len(value):
        v, pos = _varint(value, pos)
        out.append(v)
    return out


class Track:
    def __init__(self, uuid):
        self.uuid = uuid
        self.name = None
        self.parent = 0
        self.pid = None
        self.process_name = None
        self.cmdline = None  # ProcessDescriptor.cmdline, joined by spaces
        self.tid = None  # a thread track: pid and tid
        self.thread_name = None
        self.counter = False
        self.axis = None  # CounterDescriptor.y_axis_share_key
        self.unit = None  # CounterDescriptor.unit or unit_name
        self.child_ordering = None
        self.rank = None
        self.merge = None  # sibling_merge_behavior
        self.process_ordering = None  # the root descriptor's
        self.thread_ordering = None
        self.index = None  # packet index of the descriptor
        self.scope = None  # ('thread', pid, tid), ('process', pid) or ('global',)

    def is_thread(self):
        return self.tid is not None

    def is_process(self):
        return self.pid is not None and self.tid is None


class Event:
    def __init__(self, index, sequence, track, ts, kind):
        self.index = index
        self.sequence = sequence
        self.track = track
        self.ts = ts
        self.type = kind
        self.name = None
        self.categories = []
        self.flows = []
        self.terminating = []
        self.value = None
        self.args = {}  # debug annotations: name -> value
        self.slice = None  # BEGIN, END: the BEGIN event of the slice; INSTANT: itself

    def __repr__(self):
        return 'Event(%s %r ts=%d track=%d)' % (self.type, self.name, self.ts, self.track)


class _Sequence:
    def __init__(self):
        self.clear()

    def clear(self):
        self.names = {}
        self.categories = {}
        self.arg_names = {}
        self.default_clock = None
        self.default_track = None
        self.clock_value = {}   # incremental clock id -> last value
        self.clock_offset = {}  # clock id -> add to reach CLOCK_MONOTONIC


class Trace:
    def __init__(self):
        self.tracks = {}
        self.root = None  # the descriptor of uuid 0 (trace-wide ordering), when given
        self.events = []
        self.problems = []
        self.flows = []  # (source slice, destination slice): their BEGIN events
        self.clocks_related = False  # the first clock snapshot was read
        self.parents = {}  # pid -> (ppid, command line) from ProcessTree packets

    def problem(self, text):
        if len(self.problems) < 50:
            self.problems.append(text)

    def path(self, uuid):
        """Names from the root down to the track."""
        names = []
        seen = set()
        while uuid and uuid in self.tracks and uuid not in seen:
            seen.add(uuid)
            names.append(self.tracks[uuid].name)
            uuid = self.tracks[uuid].parent
        return list(reversed(names))

    def children(self, uuid):
        return [t for t in self.tracks.values() if t.parent == uuid]

    def events_on(self, predicate):
        """Events whose track satisfies predicate(track)."""
        return [e for e in self.events if e.track in self.tracks and predicate(self.tracks[e.track])]


def read(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    trace = Trace()
    sequences = {}
    for index, (field, wire, packet) in enumerate(fields(data)):
        if field != 1 or wire != LEN:
            trace.problem('field %d of Trace is not a packet' % field)
            continue
        _packet(trace, sequences, index, packet)
    check(trace)
    return trace


def _text(trace, raw, what):
    try:
        return raw.decode('utf-8')
    except UnicodeDecodeError:
        trace.problem('%s is not valid UTF-8: %r' % (what, raw))
        return raw.decode('utf-8', 'replace')


def _packet(trace, sequences, index, packet):
    p = {}
    for field, wire, value in fields(packet):
        p.setdefault(field, []).append((wire, value))
    sid = p.get(10, [(0, 0)])[0][1]
    if not sid:
        trace.problem('packet %d without trusted_packet_sequence_id' % index)
    seq = sequences.setdefault(sid, _Sequence())
    if 13 in p and p[13][0][1] & SEQ_INCREMENTAL_STATE_CLEARED:
        seq.clear()
    if 59 in p:  # TracePacketDefaults
        d = _one(p[59][0][1], {58, 11})
        seq.default_clock = d.get(58)
        if 11 in d:
            seq.default_track = _one(d[11], {11}).get(11)
    if 6 in p:  # ClockSnapshot
        snap = {}
        for field, _, clock in fields(p[6][0][1]):
            if field == 1:
                c = _one(clock, {1, 2, 3})
                snap[c.get(1)] = (c.get(2, 0), c.get(3, 0))
        if not trace.clocks_related:
            if MONOTONIC not in snap or BOOTTIME not in snap:
                trace.problem('packet %d: the clock snapshot does not relate BOOTTIME to '
                              'MONOTONIC (trace_processor: clock_sync_unrelatable_clock_domains)'
                              % index)
            elif snap[BOOTTIME][0] < snap[MONOTONIC][0]:
                trace.problem('packet %d: BOOTTIME %d before MONOTONIC %d'
                              % (index, snap[BOOTTIME][0], snap[MONOTONIC][0]))
            trace.clocks_related = True
        if MONOTONIC in snap:
            for cid, (ts, incremental) in snap.items():
                seq.clock_offset[cid] = snap[MONOTONIC][0] - ts
                if incremental:
                    seq.clock_value[cid] = ts
    if 12 in p:  # InternedData
        for field, _, entry in fields(p[12][0][1]):
            if field in (1, 2, 3):
                e = _one(entry, {1, 2})
                table = {1: seq.categories, 2: seq.names, 3: seq.arg_names}[field]
                table[e.get(1)] = _text(trace, e.get(2, b''), 'an interned name')
    if 60 in p:
        _descriptor(trace, index, p[60][0][1])
    if 3 in p:  # ProcessTree: trace_processor's process.parent_upid
        for field, _, process in fields(p[3][0][1]):
            if field == 1:
                pr = _one(process, {1, 2})
                args = [_text(trace, v, 'a command line') for f, _, v in fields(process)
                        if f == 3]
                trace.parents[pr.get(1)] = (pr.get(2), ' '.join(args) if args else None)
    if 11 in p:
        _track_event(trace, seq, sid, index, p, p[11][0][1])


def _int32(v):
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


def _descriptor(trace, index, buf):
    d = {}
    for field, wire, value in fields(buf):
        d[field] = value
    uuid = d.get(1, 0)
    if uuid in trace.tracks or (uuid == 0 and trace.root is not None):
        trace.problem('track uuid %d described twice' % uuid)
    t = Track(uuid)
    t.index = index
    t.name = _text(trace, d.get(2, b''), 'a track name')
    t.parent = d.get(5, 0)
    t.counter = 8 in d
    if t.counter:
        cd = _one(d[8], {3, 6, 7})
        t.axis = _text(trace, cd.get(7, b''), 'a y-axis share key') or None
        # CounterDescriptor.unit (1 ns, 2 count, 3 bytes) or unit_name
        t.unit = {1: 'ns', 2: 'count', 3: 'bytes'}.get(cd.get(3)) or \
            _text(trace, cd.get(6, b''), 'a unit name') or None
    t.child_ordering = d.get(11)
    t.rank = _int32(d[12]) if 12 in d else None
    t.merge = d.get(15)
    t.process_ordering = d.get(19)
    t.thread_ordering = d.get(20)
    if 3 in d:
        pd = _one(d[3], {1, 6})
        t.pid = pd.get(1)
        t.process_name = _text(trace, pd.get(6, b''), 'a process name')
        args = [_text(trace, v, 'a command line') for f, _, v in fields(d[3]) if f == 2]
        t.cmdline = ' '.join(args) if args else None
    if 4 in d:
        td = _one(d[4], {1, 2, 5})
        t.pid, t.tid = td.get(1), td.get(2)
        t.thread_name = _text(trace, td.get(5, b''), 'a thread name')
        if t.pid is None or t.tid is None:
            trace.problem('thread track %r without pid or tid' % t.name)
    if uuid == 0:  # the trace-wide root: orderings only
        if t.parent:
            trace.problem('the root descriptor (uuid 0) has a parent')
        trace.root = t
        return
    trace.tracks[uuid] = t


def _timestamp(trace, seq, index, p):
    if 8 not in p:
        trace.problem('event packet %d without a timestamp' % index)
        return 0
    ts = p[8][0][1]
    clock = p[58][0][1] if 58 in p else seq.default_clock
    if clock is None or clock == MONOTONIC:
        return ts
    if clock in seq.clock_value:  # incremental: a delta from the last value
        seq.clock_value[clock] += ts
        ts = seq.clock_value[clock]
    if clock not in seq.clock_offset:
        trace.problem('packet %d uses clock %d with no snapshot on its sequence' % (index, clock))
        return ts
    return ts + seq.clock_offset[clock]


def _track_event(trace, seq, sid, index, p, buf):
    ts = _timestamp(trace, seq, index, p)
    te = {}
    for field, wire, value in fields(buf):
        te.setdefault(field, []).append((wire, value))
    track = te[11][0][1] if 11 in te else seq.default_track
    kind = te.get(9, [(0, 0)])[0][1]
    e = Event(index, sid, track, ts, kind)
    if 10 in te:
        iid = te[10][0][1]
        if iid not in seq.names:
            trace.problem('packet %d: name iid %d not interned on sequence %d' % (index, iid, sid))
        e.name = seq.names.get(iid)
    elif 23 in te:
        e.name = _text(trace, te[23][0][1], 'an event name')
    for wire, value in te.get(3, []):
        for iid in _repeated_varint(wire, value):
            if iid not in seq.categories:
                trace.problem('packet %d: category iid %d not interned' % (index, iid))
            e.categories.append(seq.categories.get(iid))
    for wire, value in te.get(47, []):
        e.flows += _repeated_fixed64(wire, value)
    for wire, value in te.get(48, []):
        e.terminating += _repeated_fixed64(wire, value)
    if 44 in te:
        e.value = struct.unpack('<d', te[44][0][1].to_bytes(8, 'little'))[0]
    elif 30 in te:
        e.value = te[30][0][1]
    for _, annotation in te.get(4, []):
        _annotation(trace, seq, index, e, annotation)
    trace.events.append(e)


def _annotation(trace, seq, index, e, buf):
    a = {}
    for field, wire, value in fields(buf):
        a[field] = value
    if 1 in a:
        if a[1] not in seq.arg_names:
            trace.problem('packet %d: argument name iid %d not interned' % (index, a[1]))
        name = seq.arg_names.get(a[1])
    else:
        name = _text(trace, a.get(10, b''), 'an argument name')
    if not name:
        trace.problem('packet %d: an argument without a name' % index)
    if 2 in a:
        value = bool(a[2])
    elif 3 in a:
        value = a[3]
    elif 4 in a:
        value = _int32(a[4])
    elif 5 in a:
        value = struct.unpack('<d', a[5].to_bytes(8, 'little'))[0]
    elif 6 in a:
        value = _text(trace, a[6], 'an argument value')
    else:
        trace.problem('packet %d: argument %r without a value' % (index, name))
        value = None
    e.args[name] = value


def check(trace):
    """Adds to trace.problems what would not load as intended."""
    tracks = trace.tracks
    if trace.events and not trace.clocks_related:
        trace.problem('no clock snapshot: the events cannot be placed on BOOTTIME')
    for t in tracks.values():
        if t.parent and t.parent not in tracks:
            trace.problem('track %r: parent uuid %d does not exist' % (t.name, t.parent))
        seen, u = set(), t.uuid
        while u and u in tracks:
            if u in seen:
                trace.problem('track %r: its parents form a cycle' % t.name)
                break
            seen.add(u)
            u = tracks[u].parent
    last_ts, stacks = {}, {}
    for e in trace.events:
        t = tracks.get(e.track)
        if t is None:
            trace.problem('event on undescribed track %s' % e.track)
            continue
        if t.index > e.index:
            trace.problem('event before its track %r is described' % t.name)
        if e.ts < last_ts.get(e.track, e.ts):
            trace.problem('time goes back on track %r at %d' % (t.name, e.ts))
        last_ts[e.track] = e.ts
        if (e.type == COUNTER) != t.counter:
            trace.problem('event type %d on track %r (counter: %s)' % (e.type, t.name, t.counter))
        stack = stacks.setdefault(e.track, [])
        if e.type == BEGIN:
            e.slice = e
            stack.append(e)
        elif e.type == END:
            if not stack:
                trace.problem('END without BEGIN on track %r at %d' % (t.name, e.ts))
            else:
                e.slice = stack.pop()
        elif e.type == INSTANT:
            e.slice = e  # a slice of its own, of no duration
        if e.type in (BEGIN, INSTANT) and e.name is None:
            trace.problem('event without a name on track %r' % t.name)
    for uuid, stack in stacks.items():
        if stack:
            trace.problem('%d slices never end on track %r' % (len(stack), tracks[uuid].name))
    _resolve_scopes(trace)
    _check_scopes(trace)
    _check_merging(trace)
    _check_order(trace)
    _bind_flows(trace)


def _resolve_scopes(trace):
    """Each track's scope as trace_processor resolves it: its own thread or
    process descriptor, else its parent's, else global."""
    def scope(t, depth=0):
        if t.scope is None:
            if t.is_thread():
                t.scope = ('thread', t.pid, t.tid)
            elif t.is_process():
                t.scope = ('process', t.pid)
            elif t.parent in trace.tracks and depth < 100:
                t.scope = scope(trace.tracks[t.parent], depth + 1)
            else:
                t.scope = ('global',)
        return t.scope
    for t in trace.tracks.values():
        scope(t)


def nest_parent(trace, t):
    """The track `t` is shown under in Perfetto, or None: a child of a thread
    or process track is a top-level track of that thread or process."""
    p = trace.tracks.get(t.parent)
    if p is None or p.is_thread() or p.is_process() or t.is_thread() or t.is_process():
        return None
    return p


def _check_scopes(trace):
    processes = {t.pid: t for t in trace.tracks.values() if t.is_process()}
    for t in trace.tracks.values():
        if t.is_thread():
            if t.pid in processes and t.parent and trace.tracks.get(t.parent) is not \
                    processes[t.pid]:
                trace.problem('thread track %r is not under its process %d' % (t.name, t.pid))
            if t.thread_name and t.thread_name.endswith('(%d)' % t.tid):
                trace.problem('thread_name %r repeats the tid' % t.thread_name)
        if t.is_process() and t.process_name and t.process_name.endswith('(%d)' % t.pid):
            trace.problem('process_name %r repeats the pid' % t.process_name)
    with_slices = {e.track for e in trace.events if e.type in (BEGIN, INSTANT)}
    for uuid in with_slices:
        t = trace.tracks.get(uuid)
        if t is not None and t.scope[0] == 'process':
            trace.problem('slices on %r, a track of process %d but of no thread (no '
                          'ThreadDescriptor above it)' % (t.name, t.scope[1]))


def _check_merging(trace):
    """Sibling slice tracks of one name are merged unless they say NONE."""
    seen = {}
    for t in trace.tracks.values():
        if t.is_thread() or t.is_process() or t.counter:
            continue
        key = (t.parent, t.name)
        other = seen.get(key)
        if other is not None and (t.merge != MERGE_NONE or other.merge != MERGE_NONE):
            trace.problem('tracks %d and %d, both %r under one parent, would be merged '
                          '(sibling_merge_behavior is not NONE)' % (other.uuid, t.uuid, t.name))
        seen[key] = t


def _slice_counts(trace):
    """Slices per process (pid), on its tracks and its threads'."""
    counts = {}
    for e in trace.events:
        t = trace.tracks.get(e.track)
        if e.type in (BEGIN, INSTANT) and t is not None and t.scope[0] != 'global':
            counts[t.scope[1]] = counts.get(t.scope[1], 0) + 1
    return counts


def _check_order(trace):
    """The order Perfetto shows siblings in must be the order of their ranks."""
    groups = {}
    first_ts = {}
    for e in trace.events:
        first_ts.setdefault(e.track, e.ts)
    for t in trace.tracks.values():
        if t.is_thread() or t.is_process():
            continue
        p = nest_parent(trace, t)
        if p is not None:
            if p.child_ordering == EXPLICIT:
                key = t.rank or 0
            elif p.child_ordering == CHRONOLOGICAL:
                key = first_ts.get(t.uuid, 0)
            else:
                key = t.name
            groups.setdefault(('under', p.uuid), []).append((key, t))
        else:  # top-level tracks of a thread, a process, the trace: by name
            groups.setdefault(('top',) + t.scope, []).append((t.name, t))
    root = trace.root
    processes = [t for t in trace.tracks.values() if t.is_process()]
    explicit = root is not None and root.process_ordering == ORDERING_EXPLICIT
    slices = _slice_counts(trace)
    for t in processes:
        # the UI: the rank when asked for, else (roughly) most slices first, by name
        key = (t.rank or 0) if explicit else (-slices.get(t.pid, 0), t.process_name or '')
        groups.setdefault(('processes',), []).append((key, t))
    explicit = root is not None and root.thread_ordering == ORDERING_EXPLICIT
    for t in trace.tracks.values():
        if t.is_thread():
            key = ((t.rank or 0) if explicit else 0, 0 if t.tid == t.pid else 1, t.tid)
            groups.setdefault(('threads', t.pid), []).append((key, t))
    for where, members in groups.items():
        members.sort(key=lambda m: m[0])
        highest, shown = None, None
        i = 0
        while i < len(members):  # runs of one key: Perfetto may show them either way
            j = i
            while j < len(members) and members[j][0] == members[i][0]:
                j += 1
            ranks = [m[1].rank or 0 for m in members[i:j]]
            if highest is not None and min(ranks) < highest:
                low = members[i + ranks.index(min(ranks))][1]
                trace.problem('Perfetto shows %r (rank %d) after %r (rank %d) in %s'
                              % (low.name, min(ranks), shown.name, highest, where))
            if highest is None or max(ranks) > highest:
                highest = max(ranks)
                shown = members[i + ranks.index(max(ranks))][1]
            i = j


def _bind_flows(trace):
    """Flows as Perfetto's importer binds them: events in time order (file
    order for equal times); a flow id starts on a slice's begin and must be
    active when an event terminates it."""
    active = {}
    starts, ends = {}, {}
    for e in sorted(trace.events, key=lambda e: (e.ts, e.index)):
        for fid in e.flows:
            starts[fid] = starts.get(fid, 0) + 1
            if e.type != BEGIN:
                trace.problem('flow %x starts on a non-BEGIN event' % fid)
            if fid in active:
                trace.problem('flow %x starts twice' % fid)
            if fid >= 1 << 63:
                trace.problem('flow id %x has bit 63 set (negative in the flow table)' % fid)
            active[fid] = e
        for fid in e.terminating:
            ends[fid] = ends.get(fid, 0) + 1
            source = active.pop(fid, None)
            if source is None:
                trace.problem('flow %x ends before it starts (at %d on %r)'
                              % (fid, e.ts, trace.tracks[e.track].name))
            elif e.slice is None or source.slice is None:
                trace.problem('flow %x ends on no slice' % fid)
            elif e.slice.ts < source.slice.ts:
                # flow_tracker: the arrow goes from the slice that starts first
                trace.problem('flow %x is drawn backwards: it ends on %r, which began at %d, '
                              'before its source %r at %d' % (fid, e.slice.name, e.slice.ts,
                                                               source.slice.name, source.slice.ts))
            else:
                trace.flows.append((source.slice, e.slice))
    for fid in active:
        trace.problem('flow %x never ends' % fid)
    for fid, n in list(starts.items()) + list(ends.items()):
        if n != 1:
            trace.problem('flow %x appears %d times on one side' % (fid, n))
