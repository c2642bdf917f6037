-- Video (-t hgvideo): NVDEC, NVENC and nvJPEG calls and the engines' work
-- (analyze/import_video.c).  Conventions: schema/core.sql.
--
-- `image` and `call_id` are a call's number in its process image (internal:
-- the join from an activity to its call, resolved into api_id at import).

-- The three APIs (the rows under a thread).
CREATE TABLE video_apis (
    id   INTEGER PRIMARY KEY, -- 1 Decode (NVDEC), 2 Encode (NVENC), 3 JPEG (nvJPEG)
    name TEXT NOT NULL        -- 'Decode API', 'Encode API', 'JPEG API'
);
INSERT INTO video_apis VALUES (1, 'Decode API'), (2, 'Encode API'), (3, 'JPEG API');

-- What a piece of video work is.
CREATE TABLE video_kinds (
    id   INTEGER PRIMARY KEY, -- 1 decode, 2 encode, 3 JPEG
    name TEXT NOT NULL        -- 'Decode', 'Encode', 'JPEG'
);
INSERT INTO video_kinds VALUES (1, 'Decode'), (2, 'Encode'), (3, 'JPEG');

-- Every call of the video libraries.
CREATE TABLE video_api_calls (
    id            INTEGER PRIMARY KEY, -- call id
    start_ns      INTEGER NOT NULL,    -- call entry
    end_ns        INTEGER NOT NULL,    -- call return
    pid           INTEGER NOT NULL,    -- process
    tid           INTEGER NOT NULL,    -- thread
    api           INTEGER NOT NULL,    -- video_apis.id
    name_id       INTEGER NOT NULL,    -- strings: the function (cuvidDecodePicture, nvEncEncodePicture,
                                       -- nvjpegDecode ...)
    status        INTEGER NOT NULL,    -- CUresult / NVENCSTATUS / nvjpegStatus_t returned (0: success)
    handle        INTEGER,             -- the decoder, encoder session, parser or nvJPEG handle it acts
                                       -- on (its value), NULL: none
    stream_handle INTEGER,             -- the CUstream it takes (its value, 0 the default stream),
                                       -- NULL: it takes none
    stream        INTEGER,             -- that stream's id (ppu_streams.stream), NULL: unknown
                                       -- (recorded without -t hggc)
    image         INTEGER NOT NULL,    -- process image (internal)
    call_id       INTEGER NOT NULL     -- the call's number in its image (internal)
);

-- The engines' work: a decoded picture, an encoded frame, the device work of
-- an nvJPEG call.  Decode: from cuvidDecodePicture's return to the picture
-- first seen complete (cuvidGetDecodeStatus) or else mapped
-- (cuvidMapVideoFrame's return), on the map's output stream.  Encode: from
-- nvEncEncodePicture's return to nvEncLockBitstream's return, on the
-- encoder's output stream (nvEncSetIOCudaStreams, else the default stream).
-- JPEG: [first start, last end] of the HGGC device work (kernels, copies,
-- memsets) the call launched, per stream (needs -t hggc).
CREATE TABLE video_activities (
    id            INTEGER PRIMARY KEY, -- activity id
    kind          INTEGER NOT NULL,    -- video_kinds.id
    start_ns      INTEGER NOT NULL,    -- start
    end_ns        INTEGER NOT NULL,    -- end
    pid           INTEGER NOT NULL,    -- process
    api_id        INTEGER,             -- video_api_calls.id of the call that submitted it, NULL:
                                       -- not recorded
    handle        INTEGER,             -- decoder / encoder / nvJPEG handle (its value)
    stream_handle INTEGER,             -- the CUstream (its value)
    stream        INTEGER,             -- its id (ppu_streams.stream), NULL: unknown
    bytes         INTEGER,             -- decode: bitstream in; encode: bitstream out; JPEG: bytes copied
    picture       INTEGER,             -- decode: the decode surface (picture index), else NULL
    image         INTEGER NOT NULL,    -- process image (internal)
    call_id       INTEGER NOT NULL     -- the submitting call's number in its image (internal)
);

-- after load
CREATE INDEX video_api_calls_by_call ON video_api_calls (image, call_id);
CREATE INDEX video_api_calls_by_thread ON video_api_calls (pid, tid, start_ns);
CREATE INDEX video_activities_by_stream ON video_activities (pid, stream, start_ns);
