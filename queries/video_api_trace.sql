-- name: video_api_trace
-- title: Video API Trace
-- description: Every video library call (-t hgvideo) in start order: its API (Decode, Encode,
--   JPEG), the status it returned (CUresult, NVENCSTATUS or nvjpegStatus_t; 0 is success), the
--   handle it acted on (decoder, encoder session, nvJPEG handle: its value in hex), the stream
--   it took (its id, Stream when the stream is known to HGGC; the raw CUstream value
--   otherwise), and the engine work it submitted: the work's start and end (the first of
--   several for nvJPEG, which lists its streams' work in video_activity_sum).  Times are
--   relative to the session start.
-- requires: video_api_calls: no video API calls (record with -t hgvideo)
-- columns: Start (ns), End (ns), Duration (ns), API, Name, Status, Handle, Stream, PID, TID,
--   Work Start (ns), Work End (ns)
SELECT v.start_ns - :session_start AS "Start (ns)",
       v.end_ns - :session_start AS "End (ns)",
       v.end_ns - v.start_ns AS "Duration (ns)",
       p.name AS "API",
       s.value AS "Name",
       v.status AS "Status",
       CASE WHEN v.handle IS NOT NULL THEN printf('0x%x', v.handle) END AS "Handle",
       CASE WHEN v.stream IS NOT NULL THEN CAST(v.stream AS TEXT)
            WHEN v.stream_handle IS NOT NULL THEN printf('0x%x', v.stream_handle) END
           AS "Stream",
       v.pid AS "PID",
       v.tid AS "TID",
       (SELECT MIN(w.start_ns) FROM video_activities AS w WHERE w.api_id = v.id)
           - :session_start AS "Work Start (ns)",
       (SELECT MAX(w.end_ns) FROM video_activities AS w WHERE w.api_id = v.id)
           - :session_start AS "Work End (ns)"
FROM video_api_calls AS v
JOIN strings AS s ON s.id = v.name_id
JOIN video_apis AS p ON p.id = v.api
WHERE v.end_ns >= :filter_start AND v.start_ns <= :filter_end
  AND (:pid < 0 OR v.pid = :pid) AND (:tid < 0 OR v.tid = :tid)
ORDER BY v.start_ns, v.id;
