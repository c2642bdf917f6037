-- name: video_api_sum
-- title: Video API Summary
-- description: Statistics of the video library calls (-t hgvideo): the Decode API (NVDEC,
--   libnvcuvid), the Encode API (NVENC, the function list of libnvidia-encode) and the JPEG
--   API (nvJPEG), grouped by API and function.  Time (%) is a row's share of the total of all
--   rows.  With --filter-time, calls are clipped to the window and calls outside it left out.
-- requires: video_api_calls: no video API calls (record with -t hgvideo)
-- summary: Num Calls
-- columns: Time (%), Total Time (ns), Num Calls, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), API, Name
SELECT p.name AS "API", s.value AS "Name",
       MIN(v.end_ns, :filter_end) - MAX(v.start_ns, :filter_start) AS duration
FROM video_api_calls AS v
JOIN strings AS s ON s.id = v.name_id
JOIN video_apis AS p ON p.id = v.api
WHERE v.end_ns >= :filter_start AND v.start_ns <= :filter_end;
