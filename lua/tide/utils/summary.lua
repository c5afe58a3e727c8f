-- tide.utils.summary — the `Summary` messages of PyTorch 1.13's
-- torch/utils/tensorboard/summary.py, field for field: scalar, histogram (its bucket scheme),
-- image, text and hparams. Field numbers from
-- tensorboard/compat/proto/{summary,tensor,tensor_shape,types}.proto and
-- tensorboard/plugins/hparams/{api,plugin_data}.proto.
local core = require("tide.core")
local fail = require("tide.autograd.raise") -- at the user's line
local pb = require("tide.utils.protobuf")

local M = {}

local message, bytes, varint, double = pb.message, pb.bytes, pb.varint, pb.double

-- Summary { repeated Value value = 1 }; Value { tag = 1, simple_value = 2, image = 4, histo = 5,
-- tensor = 8, metadata = 9 }
local function summary(value)
    return bytes(1, value, true)
end

-- SummaryMetadata { PluginData plugin_data = 1 { plugin_name = 1, content = 2 } }
local function plugin_metadata(name, content)
    return bytes(1, message(bytes(1, name), bytes(2, content)), true)
end

function M.scalar(tag, v)
    return summary(message(bytes(1, tag), pb.float(2, v)))
end

--- add_scalar's new_style: TensorProto { dtype = 1 (DT_FLOAT 1 / DT_DOUBLE 2), float_val = 5 |
--- double_val = 6 (packed) } under the scalars plugin
function M.scalar_tensor(tag, v, double_precision)
    local tensor = double_precision and message(varint(1, 2), pb.packed_doubles(6, { v }))
        or message(varint(1, 1), pb.packed_floats(5, { v }))
    return summary(message(bytes(1, tag), bytes(8, tensor, true),
        bytes(9, plugin_metadata("scalars", ""), true)))
end

-- PyTorch's default_bins for bins = "tensorflow": +-1e-12 * 1.1^k up to 1e20, and 0
local tf_bins
local function tensorflow_bins()
    if not tf_bins then
        local pos, v = {}, 1e-12
        while v < 1e20 do
            pos[#pos + 1] = v
            v = v * 1.1
        end
        tf_bins = {}
        for i = #pos, 1, -1 do
            tf_bins[#tf_bins + 1] = -pos[i]
        end
        tf_bins[#tf_bins + 1] = 0
        for i = 1, #pos do
            tf_bins[#tf_bins + 1] = pos[i]
        end
    end
    return tf_bins
end

-- numpy.linspace(lo, hi, n + 1), as np.histogram(values, bins = n) makes its edges
local function uniform_bins(lo, hi, n)
    if lo == hi then
        lo, hi = lo - 0.5, hi + 0.5
    end
    local edges, step = {}, (hi - lo) / n
    for i = 0, n - 1 do
        edges[i + 1] = i * step + lo
    end
    edges[n + 1] = hi
    return edges
end

--- M.histogram_values(vals, bins) -> the HistogramProto fields of make_histogram: counts as
--- numpy.histogram (edge[i] <= v < edge[i + 1], the last bin closed), trimmed to the support with
--- one empty bin on the left, as PyTorch does. vals: a Lua list of numbers (float64).
-- numpy's pairwise summation of a[i..i+n-1] (numpy/core/src/umath/loops_utils.h.src), the
-- order values.sum() adds in: blocks of up to 128 summed with 8 accumulators
local function pairwise_sum(a, i, n)
    if n < 8 then
        local res = 0
        for k = i, i + n - 1 do
            res = res + a[k]
        end
        return res
    elseif n <= 128 then
        local r = {}
        for j = 0, 7 do
            r[j] = a[i + j]
        end
        local k = 8
        while k < n - n % 8 do
            for j = 0, 7 do
                r[j] = r[j] + a[i + k + j]
            end
            k = k + 8
        end
        local res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while k < n do
            res = res + a[i + k]
            k = k + 1
        end
        return res
    end
    local n2 = math.floor(n / 2)
    n2 = n2 - n2 % 8
    return pairwise_sum(a, i, n2) + pairwise_sum(a, i + n2, n - n2)
end

-- numpy.percentile(sorted s, q) with its linear method (numpy 1.24's _lerp)
local function percentile(s, q)
    local idx = q / 100 * (#s - 1)
    local i = math.floor(idx)
    local t = idx - i
    local a, b = s[i + 1], s[math.min(i + 2, #s)]
    if t >= 0.5 then
        return b - (b - a) * (1 - t)
    end
    return a + (b - a) * t
end

-- numpy's bin width estimators ("auto": the smaller of "fd" and "sturges", "sturges" when the
-- interquartile range is 0), then np.histogram's ceil(range / width) equal bins
local function estimated_bins(vals, lo, hi, how)
    local n = #vals
    local sturges = (hi - lo) / (math.log(n) / math.log(2) + 1)
    local width = sturges
    if how ~= "sturges" then
        local s = {}
        for i = 1, n do
            s[i] = vals[i]
        end
        table.sort(s)
        local fd = 2 * (percentile(s, 75) - percentile(s, 25)) * n ^ (-1 / 3)
        width = (how == "fd" or (fd > 0 and fd < sturges)) and fd or sturges
    end
    local first, last = lo, hi
    if first == last then
        first, last = first - 0.5, last + 0.5
    end
    return uniform_bins(first, last, width > 0 and math.ceil((last - first) / width) or 1)
end

function M.histogram_values(vals, bins, max_bins)
    local n = #vals
    local lo, hi, sq = math.huge, -math.huge, 0
    for i = 1, n do
        local v = vals[i]
        if v < lo then lo = v end
        if v > hi then hi = v end
        sq = sq + v * v -- PyTorch: values.dot(values), in BLAS's order (not reproducible here)
    end
    local sum = 0 + pairwise_sum(vals, 1, n)
    local edges
    if bins == "tensorflow" then
        edges = tensorflow_bins()
    elseif type(bins) == "string" then
        edges = estimated_bins(vals, lo, hi, bins)
    elseif type(bins) == "table" then
        edges = bins
    else
        edges = uniform_bins(lo, hi, bins)
    end
    local nb = #edges - 1
    local counts = {}
    for b = 1, nb do
        counts[b] = 0
    end
    local first, last = edges[1], edges[nb + 1]
    for i = 1, n do
        local v = vals[i]
        if v >= first and v <= last then
            -- the last b with edges[b] <= v (binary search), the top edge in the last bin
            local a, z = 1, nb
            while a < z do
                local m = math.ceil((a + z) / 2)
                if edges[m] <= v then a = m else z = m - 1 end
            end
            counts[a] = counts[a] + 1
        end
    end
    if max_bins and nb > max_bins then -- PyTorch: sums of `sub` neighbouring bins (0-padded)
        local sub = math.floor(nb / max_bins)
        local c, e = {}, {}
        for b = 1, nb, sub do
            local t = 0
            for k = b, math.min(b + sub - 1, nb) do
                t = t + counts[k]
            end
            c[#c + 1], e[#e + 1] = t, edges[b]
        end
        e[#e + 1] = edges[nb + 1]
        counts, edges, nb = c, e, #c
    end
    -- start: the first non-empty bin, stop: the last (1-based); cut to counts[start-1..stop]
    local start, stop
    for b = 1, nb do
        if counts[b] > 0 then
            start = start or b
            stop = b
        end
    end
    if not start then
        fail("tide: add_histogram: no value lies within the bins (are they all NaN or beyond "
            .. "+-1e20?)")
    end
    local bucket, limit = {}, {}
    if start > 1 then
        for b = start - 1, stop do
            bucket[#bucket + 1] = counts[b]
        end
    else
        bucket[1] = 0
        for b = 1, stop do
            bucket[#bucket + 1] = counts[b]
        end
    end
    for e = start, stop + 1 do
        limit[#limit + 1] = edges[e]
    end
    return { min = lo, max = hi, num = n, sum = sum, sum_squares = sq, bucket_limit = limit,
        bucket = bucket }
end

-- HistogramProto { min = 1, max = 2, num = 3, sum = 4, sum_squares = 5 (doubles),
-- bucket_limit = 6, bucket = 7 (packed doubles) }
function M.histogram(tag, h)
    local histo = message(double(1, h.min), double(2, h.max), double(3, h.num), double(4, h.sum),
        double(5, h.sum_squares), pb.packed_doubles(6, h.bucket_limit),
        pb.packed_doubles(7, h.bucket))
    return summary(message(bytes(1, tag), bytes(5, histo, true)))
end

-- Image { height = 1, width = 2, colorspace = 3, encoded_image_string = 4 }
function M.image(tag, height, width, channels, png)
    local img = message(varint(1, height), varint(2, width), varint(3, channels), bytes(4, png))
    return summary(message(bytes(1, tag), bytes(4, img, true)))
end

-- TensorProto { dtype = 1 (DT_STRING = 7), tensor_shape = 2 { dim = 2 { size = 1 } },
-- string_val = 8 }, under the text plugin with TextPluginData { version = 0 } (empty bytes)
function M.text(tag, s)
    local tensor = message(varint(1, 7), bytes(2, bytes(2, varint(1, 1), true), true),
        bytes(8, s, true))
    return summary(message(bytes(1, tag .. "/text_summary"), bytes(8, tensor, true),
        bytes(9, plugin_metadata("text", ""), true)))
end

-- TensorProto { dtype = 1 (DT_FLOAT = 1), tensor_shape = 2 { dim = 2 { size = 1 } } (6, n),
-- float_val = 5 } under the pr_curves plugin with PrCurvePluginData { version = 1 (0),
-- num_thresholds = 2 }; rows: the 6 lists tp, fp, tn, fn, precision, recall
function M.pr_curve(tag, rows, num_thresholds)
    local flat, width = {}, #rows[1] -- the tensor's shape is (6, #rows[1]), as np.stack makes
    for _, r in ipairs(rows) do
        for _, v in ipairs(r) do
            flat[#flat + 1] = v
        end
    end
    local shape = message(bytes(2, varint(1, 6), true), bytes(2, varint(1, width), true))
    local tensor = message(varint(1, 1), bytes(2, shape, true), pb.packed_floats(5, flat))
    return summary(message(bytes(1, tag), bytes(8, tensor, true),
        bytes(9, plugin_metadata("pr_curves", varint(2, num_thresholds)), true)))
end

-- a little-endian unsigned integer of n bytes (Lua 5.1 has no string.pack)
local function le(v, n)
    local t = {}
    for i = 1, n do
        t[i] = string.char(v % 256)
        v = math.floor(v / 256)
    end
    return table.concat(t)
end

--- M.audio(tag, samples, sample_rate): samples already int16 values; Python's wave module's
--- mono 16-bit WAV in Audio { sample_rate = 1 (float), num_channels = 2, length_frames = 3,
--- encoded_audio_string = 4, content_type = 5 } (Value field 6)
function M.audio(tag, samples, sample_rate)
    local data = {}
    for i, v in ipairs(samples) do
        data[i] = le(v % 65536, 2)
    end
    data = table.concat(data)
    local wav = "RIFF" .. le(36 + #data, 4) .. "WAVEfmt " .. le(16, 4) .. le(1, 2) .. le(1, 2)
        .. le(sample_rate, 4) .. le(sample_rate * 2, 4) .. le(2, 2) .. le(16, 2) .. "data"
        .. le(#data, 4) .. data
    local audio = message(pb.float(1, sample_rate), varint(2, 1), varint(3, #samples),
        bytes(4, wav), bytes(5, "audio/wav"))
    return summary(message(bytes(1, tag), bytes(6, audio, true)))
end

--- M.custom_scalars(categories): categories a list of {title, charts = {{title, kind, tags}}};
--- Layout { category = 2 { title = 1, chart = 2 { title = 1, multiline = 2 { tag = 1 } |
--- margin = 3 { series = 1 { value = 1, lower = 2, upper = 3 } } } } } in a DT_STRING tensor
--- of shape () tagged custom_scalars__config__
function M.custom_scalars(categories)
    local cats = {}
    for _, c in ipairs(categories) do
        local charts = {}
        for _, ch in ipairs(c.charts) do
            local content
            if ch.kind == "Margin" then
                content = bytes(3, bytes(1, message(bytes(1, ch.tags[1]), bytes(2, ch.tags[2]),
                    bytes(3, ch.tags[3])), true), true)
            else
                local tags = {}
                for i, t in ipairs(ch.tags) do
                    tags[i] = bytes(1, t, true)
                end
                content = bytes(2, table.concat(tags), true)
            end
            charts[#charts + 1] = bytes(2, message(bytes(1, ch.title), content), true)
        end
        cats[#cats + 1] = bytes(2, message(bytes(1, c.title), table.concat(charts)), true)
    end
    local tensor = message(varint(1, 7), bytes(2, "", true), bytes(8, table.concat(cats), true))
    return summary(message(bytes(1, "custom_scalars__config__"), bytes(8, tensor, true),
        bytes(9, plugin_metadata("custom_scalars", ""), true)))
end

-- GraphDef { node = 1 { name = 1, op = 2, input = 3 (repeated), device = 4 }, versions = 4 {
-- producer = 1 } }; nodes: a list of {name =, op =, inputs = {...}}
function M.graph_def(nodes)
    local parts = {}
    for i, n in ipairs(nodes) do
        local ins = {}
        for j, s in ipairs(n.inputs or {}) do
            ins[j] = bytes(3, s, true)
        end
        parts[i] = bytes(1, message(bytes(1, n.name), bytes(2, n.op), table.concat(ins),
            bytes(4, n.device)), true)
    end
    return table.concat(parts) .. bytes(4, varint(1, 22), true)
end

-- ---- hparams (tensorboard/plugins/hparams) ---------------------------------------------------

local DATA_TYPE = { number = 3, string = 1 } -- DATA_TYPE_FLOAT64, DATA_TYPE_STRING

-- HParamsPluginData { version = 1 (0), experiment = 2 | session_start_info = 3 |
-- session_end_info = 4 } as the hparams plugin's SummaryMetadata
local function hparams_value(tag, field, content)
    local data = message(bytes(field, content, true))
    return summary(message(bytes(1, tag), bytes(9, plugin_metadata("hparams", data), true)))
end

--- M.hparams(names, hparams, metric_names) -> the experiment, session_start_info and
--- session_end_info summaries of PyTorch's hparams(); names: hparams' keys in the order written
function M.hparams(names, hp, metric_names)
    local infos, ssi = {}, {}
    for _, k in ipairs(names) do
        local v = hp[k]
        -- PyTorch tests isinstance(v, int) first, and a bool is an int: true is the number 1
        if type(v) == "boolean" then
            v = v and 1 or 0
        end
        local kind = type(v)
        -- google.protobuf.Value { number_value = 2, string_value = 3 }: a oneof, so a 0 or an
        -- empty string is written too
        local value
        if kind == "number" then
            value = message(pb.key(2, 1), core._pb_double(v))
        else
            value = bytes(3, v, true)
        end
        -- map<string, Value> hparams = 1: entries { key = 1, value = 2 }
        ssi[#ssi + 1] = bytes(1, message(bytes(1, k), bytes(2, value, true)), true)
        -- HParamInfo { name = 1, type = 4 }
        infos[#infos + 1] = bytes(4, message(bytes(1, k), varint(4, DATA_TYPE[kind])), true)
    end
    local metrics = {}
    for _, k in ipairs(metric_names) do
        -- MetricInfo { name = 1 MetricName { tag = 2 } }
        metrics[#metrics + 1] = bytes(5, bytes(1, bytes(2, k), true), true)
    end
    -- Experiment { hparam_infos = 4, metric_infos = 5 }
    local exp = table.concat(infos) .. table.concat(metrics)
    return hparams_value("_hparams_/experiment", 2, exp),
        hparams_value("_hparams_/session_start_info", 3, table.concat(ssi)),
        -- SessionEndInfo { status = 1 (STATUS_SUCCESS = 1) }
        hparams_value("_hparams_/session_end_info", 4, varint(1, 1))
end

return M
