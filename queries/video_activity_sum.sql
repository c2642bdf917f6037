-- name: video_activity_sum
-- title: Video Activity Summary
-- description: The video engines' work (-t hgvideo), per engine (the device's decoder,
--   encoder, or nvJPEG's device work), kind and stream: how many pieces of work (Frames:
--   decoded pictures, encoded frames, nvJPEG calls), their time and the bytes they moved
--   (decode: bitstream in; encode: bitstream out; JPEG: bytes copied), with Bytes/s over the
--   summed time.  A decode lasts from cuvidDecodePicture's return until the picture is first
--   seen complete (cuvidGetDecodeStatus) or mapped (cuvidMapVideoFrame); an encode from
--   nvEncEncodePicture's return until nvEncLockBitstream returns its output; nvJPEG's work
--   from the first start to the last end of the copies and kernels (HGGC) a call launched on
--   a stream.  Device and Stream are empty when the stream is not known to HGGC (record with
--   -t hggc,hgvideo).  Time (%) is a row's share of all rows' time.  With --filter-time, work
--   is clipped to the window and work outside it left out.
-- requires: video_activities: no video engine work (record with -t hgvideo)
-- columns: Time (%), Total Time (ns), Frames, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Bytes, Bytes/s, Device, Stream, Engine, Kind
WITH samples AS (
    SELECT w.kind, w.pid, w.stream, w.bytes,
           (SELECT COALESCE(d.physical_index, c.device)
            FROM ppu_streams AS st
            JOIN ppu_contexts AS c ON c.pid = st.pid AND c.context = st.context
            LEFT JOIN ppu_devices AS d ON d.pid = c.pid AND d.device = c.device
            WHERE st.pid = w.pid AND st.stream = w.stream) AS device,
           MIN(w.end_ns, :filter_end) - MAX(w.start_ns, :filter_start) AS duration
    FROM video_activities AS w
    WHERE w.end_ns >= :filter_start AND w.start_ns <= :filter_end
), grouped AS (
    SELECT kind, device, stream, SUM(duration) AS total, COUNT(*) AS n, AVG(duration) AS average,
           median(duration) AS med, MIN(duration) AS shortest, MAX(duration) AS longest,
           stdev(duration) AS deviation, SUM(bytes) AS bytes
    FROM samples GROUP BY kind, device, stream
)
SELECT 100.0 * g.total / NULLIF(SUM(g.total) OVER (), 0) AS "Time (%)",
       g.total AS "Total Time (ns)",
       g.n AS "Frames",
       g.average AS "Avg (ns)",
       g.med AS "Med (ns)",
       g.shortest AS "Min (ns)",
       g.longest AS "Max (ns)",
       g.deviation AS "StdDev (ns)",
       g.bytes AS "Bytes",
       1e9 * g.bytes / NULLIF(g.total, 0) AS "Bytes/s",
       g.device AS "Device",
       g.stream AS "Stream",
       CASE g.kind WHEN 1 THEN 'NVDEC' WHEN 2 THEN 'NVENC' ELSE 'nvJPEG' END AS "Engine",
       k.name AS "Kind"
FROM grouped AS g JOIN video_kinds AS k ON k.id = g.kind
ORDER BY g.total DESC, g.kind, g.device, g.stream;
