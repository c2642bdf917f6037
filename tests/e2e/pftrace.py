"""A reader of Perfetto protobuf traces (.pftrace), written from the field
numbers of Perfetto's published protos (trace.proto, trace_packet.proto,
track_descriptor.proto, track_event.proto, interned_data.proto,
clock_snapshot.proto), and the checks a trace must pass to load as intended:
tracks form a tree, slices nest per track, names resolve through the
sequence's interned data, and every flow connects when its events are
processed in time order (as Perfetto's importer does)."""
import gzip
import struct

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4
MONOTONIC = 3
SEQ_INCREMENTAL_STATE_CLEARED = 1


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
        self.counter = False
        self.child_ordering = None
        self.rank = None
        self.index = None  # packet index of the descriptor


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
        self.slice = None  # BEGIN and END: the BEGIN event of the slice

    def __repr__(self):
        return 'Event(%s %r ts=%d track=%d)' % (self.type, self.name, self.ts, self.track)


class _Sequence:
    def __init__(self):
        self.clear()

    def clear(self):
        self.names = {}
        self.categories = {}
        self.default_clock = None
        self.default_track = None
        self.clock_value = {}   # incremental clock id -> last value
        self.clock_offset = {}  # clock id -> add to reach CLOCK_MONOTONIC


class Trace:
    def __init__(self):
        self.tracks = {}
        self.events = []
        self.problems = []
        self.flows = []  # (source slice, destination slice): their BEGIN events

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
        if MONOTONIC in snap:
            for cid, (ts, incremental) in snap.items():
                seq.clock_offset[cid] = snap[MONOTONIC][0] - ts
                if incremental:
                    seq.clock_value[cid] = ts
    if 12 in p:  # InternedData
        for field, _, entry in fields(p[12][0][1]):
            if field in (1, 2):
                e = _one(entry, {1, 2})
                table = seq.categories if field == 1 else seq.names
                table[e.get(1)] = _text(trace, e.get(2, b''), 'an interned name')
    if 60 in p:
        _descriptor(trace, index, p[60][0][1])
    if 11 in p:
        _track_event(trace, seq, sid, index, p, p[11][0][1])


def _descriptor(trace, index, buf):
    d = {}
    for field, wire, value in fields(buf):
        d[field] = value
    uuid = d.get(1)
    if uuid in trace.tracks:
        trace.problem('track uuid %d described twice' % uuid)
    t = Track(uuid)
    t.index = index
    t.name = _text(trace, d.get(2, b''), 'a track name')
    t.parent = d.get(5, 0)
    t.counter = 8 in d
    t.child_ordering = d.get(11)
    t.rank = d.get(12)
    if 3 in d:
        pd = _one(d[3], {1, 6})
        t.pid = pd.get(1)
        t.process_name = _text(trace, pd.get(6, b''), 'a process name')
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
    trace.events.append(e)


def check(trace):
    """Adds to trace.problems what would not load as intended."""
    tracks = trace.tracks
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
        if e.type in (BEGIN, INSTANT) and e.name is None:
            trace.problem('event without a name on track %r' % t.name)
    for uuid, stack in stacks.items():
        if stack:
            trace.problem('%d slices never end on track %r' % (len(stack), tracks[uuid].name))
    _bind_flows(trace)


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
            active[fid] = e
        for fid in e.terminating:
            ends[fid] = ends.get(fid, 0) + 1
            source = active.pop(fid, None)
            if source is None:
                trace.problem('flow %x ends before it starts (at %d on %r)'
                              % (fid, e.ts, trace.tracks[e.track].name))
            else:
                trace.flows.append((source.slice, e.slice))
    for fid in active:
        trace.problem('flow %x never ends' % fid)
    for fid, n in list(starts.items()) + list(ends.items()):
        if n != 1:
            trace.problem('flow %x appears %d times on one side' % (fid, n))
