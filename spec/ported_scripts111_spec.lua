-- ported_scripts111_spec.lua — openai/whisper's whisper/audio.py (pad_or_trim, mel_filters,
-- log_mel_spectrogram: torch.hann_window, torch.stft(..., return_complex=True), the power
-- spectrum stft[..., :-1].abs() ** 2, the mel filter matmul, clamp(min=1e-10).log10(), the 8 dB
-- floor torch.maximum(log_spec, log_spec.max() - 8.0), (log_spec + 4.0) / 4.0) and
-- whisper/model.py (ModelDimensions, the dtype-casting LayerNorm / Linear / Conv1d, sinusoids,
-- MultiHeadAttention with qkv_attention and the kv_cache keyed by module,
-- ResidualAttentionBlock with cross attention, AudioEncoder, TextDecoder with the -inf triu_
-- mask, Whisper with embed_audio / logits / forward and install_kv_cache_hooks), ported line for
-- line at tiny sizes (N_FFT 16, HOP_LENGTH 4, 4 mel bins, widths 8, 1 layer, 12 tokens). The
-- Python line stands above each Lua line that differs from it. The weights are a formula over
-- each parameter's place in named_parameters order and the audio a sum of two sines, so the log
-- mel, the encoder output and the decoder logits (a prompt, and a greedy decode of 3 tokens with
-- and without the kv-cache hooks) are checked against PyTorch 1.13's values for the same ones.
-- Token ids are 1-based (PyTorch's id + 1).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- PyTorch 1.13's values (the script: whisper's audio.py and model.py pasted, torch's
-- SDPA_AVAILABLE false there (1.13 has no scaled_dot_product_attention), the weights
-- p.copy_((0.3 * torch.sin(2.9 * j + 1.3 * i + 0.3)).view(p.shape).float()) for the i-th
-- parameter (0-based) and j = torch.arange(p.numel(), dtype=torch.float64), the audio
-- (0.5 * torch.sin(0.3 * n) + 0.25 * torch.sin(1.7 * n)).float() for n = torch.arange(200.))
---------------------------------------------------------------------------------------------
-- librosa.filters.mel(sr=16000, n_fft=16, n_mels=4) (Slaney's mel scale and area norm), the
-- array whisper's mel_filters.npz holds at its sizes (80 or 128 x 201)
local MEL_FILTERS_4x9 = {
    { -0, 0.00060509576, 0, 0, 0, 0, 0, 0, 0 },
    { 0, 0.0007352135726, 0.0003358614922, 0, 0, 0, 0, 0, 0 },
    { 0, 0, 0.0004672640353, 0.0004257152032, 9.680999938e-05, 0, 0, 0, 0 },
    {
        0, 0, 0, 0.0001226749882, 0.0002992288209, 0.0002843183465, 0.0001895455644,
        9.477278218e-05, 0
    },
}
local WANT_FULL_MEL = {
    0.1477222, 0.3233922, 0.3378115, 0.3297938, 0.3496451, 0.326219, 0.3414792, 0.3441989,
    0.3262367, 0.3508991, 0.3337434, 0.3346572, 0.348942, 0.3244627, 0.3447806, 0.3393667,
    0.3282795, 0.3513487, 0.3296701, 0.3398777, 0.3471162, 0.3246897, 0.3478002, 0.3347526,
    0.3313958, 0.3499355, 0.3263546, 0.3443899, 0.3437867, 0.3267763, 0.3502436, 0.3308622,
    0.335413, 0.3473666, 0.3245293, 0.3474844, 0.3391074, 0.3302594, 0.3514137, 0.3278953,
    0.3401033, 0.3442977, 0.324602, 0.3491079, 0.3338705, 0.3343757, 0.3506445, 0.3260363,
    0.3448976, 0.2985049, 0.1864473, 0.350384, 0.3645772, 0.3575069, 0.3759106, 0.3544919,
    0.3682637, 0.3705007, 0.3537454, 0.3763769, 0.360554, 0.3616053, 0.3750507, 0.3528536,
    0.3714557, 0.3663532, 0.3559605, 0.3769441, 0.3567551, 0.3661751, 0.3730659, 0.352752,
    0.3741533, 0.3622708, 0.3591166, 0.3759125, 0.3539488, 0.3703579, 0.3697816, 0.3542843,
    0.3761534, 0.3585938, 0.3628691, 0.3737805, 0.3526632, 0.3734499, 0.3654857, 0.3572853,
    0.3769701, 0.3555532, 0.3669897, 0.3710029, 0.3530067, 0.3752455, 0.3609347, 0.3611676,
    0.3761361, 0.3535215, 0.3710991, 0.3326051, 0.044158, 0.1246597, 0.1252398, 0.1326363,
    0.1284912, 0.1379904, 0.1297962, 0.1227289, 0.1248481, 0.1127971, 0.1209672, 0.1242971,
    0.1246185, 0.1378862, 0.1312115, 0.1307276, 0.1306698, 0.1160039, 0.120966, 0.1176286,
    0.1192666, 0.1326445, 0.1280844, 0.1352729, 0.135048, 0.122676, 0.1263514, 0.1163269,
    0.1161447, 0.1252877, 0.1215968, 0.1346262, 0.1349075, 0.1288345, 0.1336796, 0.120031,
    0.1183461, 0.1205905, 0.1152072, 0.1297745, 0.1296566, 0.1312819, 0.138271, 0.1253816,
    0.1255791, 0.121426, 0.1128001, 0.1241276, 0.1214564, 0.1820037, 0.0984156, 0.1430648,
    0.1575301, 0.1574444, 0.1572245, 0.1569749, 0.1571788, 0.1578426, 0.1581187, 0.1579279,
    0.1580864, 0.1580437, 0.1573901, 0.1569875, 0.1571239, 0.1573751, 0.1574512, 0.1578,
    0.1584068, 0.1582388, 0.1576513, 0.1574988, 0.1573391, 0.1570201, 0.1570294, 0.1576006,
    0.1580833, 0.15796, 0.1580173, 0.1581706, 0.1576408, 0.1570657, 0.1570517, 0.1572939,
    0.1573976, 0.1576045, 0.1582463, 0.1583959, 0.1578198, 0.1575469, 0.1574497, 0.1571133,
    0.1569507, 0.1573584, 0.1579678, 0.1580024, 0.1579486, 0.1582079, 0.1578948, 0.1688995
}
local WANT_MEL = {
    0.1477222, 0.3233922, 0.3378115, 0.3297938, 0.3496451, 0.326219, 0.3414792, 0.3441989,
    0.3262367, 0.3508991, 0.3337434, 0.3346572, 0.348942, 0.3244627, 0.3447806, 0.2885171,
    0.1864473, 0.350384, 0.3645772, 0.3575069, 0.3759106, 0.3544919, 0.3682637, 0.3705007,
    0.3537454, 0.3763769, 0.360554, 0.3616053, 0.3750507, 0.3528536, 0.3714557, 0.3176535,
    0.044158, 0.1246597, 0.1252398, 0.1326363, 0.1284912, 0.1379904, 0.1297962, 0.1227289,
    0.1248481, 0.1127971, 0.1209672, 0.1242971, 0.1246185, 0.1378862, 0.1312115, 0.111654,
    0.0984156, 0.1430648, 0.1575301, 0.1574444, 0.1572245, 0.1569749, 0.1571788, 0.1578426,
    0.1581187, 0.1579279, 0.1580864, 0.1580437, 0.1573901, 0.1569875, 0.1571239, 0.1421281
}
local WANT_SHORT_MEL = {
    0.1477222, 0.3233922, 0.3378115, 0.3297938, 0.3496451, 0.326219, 0.3414792, 0.3441989,
    0.3262367, 0.3457735, 0.2448285, -0.1698122, -1.5, -1.5, -1.5, -1.5, 0.1864473, 0.350384,
    0.3645772, 0.3575069, 0.3759106, 0.3544919, 0.3682637, 0.3705007, 0.3537454, 0.3754797,
    0.281221, -0.1137481, -1.5, -1.5, -1.5, -1.5, 0.044158, 0.1246597, 0.1252398, 0.1326363,
    0.1284912, 0.1379904, 0.1297962, 0.1227289, 0.1248481, 0.1600341, 0.103712, -0.1537218,
    -1.5, -1.5, -1.5, -1.5, 0.0984156, 0.1430648, 0.1575301, 0.1574444, 0.1572245, 0.1569749,
    0.1571788, 0.1578426, 0.1581187, 0.1372021, 0.0423478, -0.200243, -1.5, -1.5, -1.5, -1.5
}
local WANT_AUDIO_FEATURES = {
    0.2775208, -0.2472238, 0.3016461, -0.6189601, -0.1418668, 0.3226621, -0.4123618, 0.1512837,
    0.2329216, -0.2384641, 0.308102, -0.6180029, 0.0492725, 0.2839844, -0.355253, 0.1129303,
    0.2278556, -0.2169148, 0.2758248, -0.5464818, 0.3268936, 0.298326, -0.3668267, 0.1494194,
    0.2578293, -0.1901895, 0.239385, -0.496139, 0.4580532, 0.3488917, -0.4242342, 0.209082,
    0.2998378, -0.1731586, 0.2253449, -0.4967417, 0.3468694, 0.3872433, -0.4733744, 0.2419706,
    0.3177296, -0.177007, 0.2476052, -0.5462712, 0.062041, 0.3644075, -0.4583665, 0.2114319,
    0.2910108, -0.1932368, 0.2923877, -0.6215218, -0.1283024, 0.3033997, -0.3995686, 0.1410661,
    0.2435797, -0.2018306, 0.3154546, -0.6411278, -0.016042, 0.2557518, -0.3481515, 0.0997887
}
local WANT_PROMPT_LOGITS = {
    -0.1476041, -0.3459478, 0.3926001, 0.0679133, -0.4406955, 0.2441817, 0.267769, -0.4338124,
    0.0394516, 0.4058732, -0.326886, -0.1743767, -0.1356196, -0.3373177, 0.3745038, 0.0720987,
    -0.4255632, 0.2292799, 0.2631901, -0.4156678, 0.0311807, 0.393586, -0.3099134, -0.1741092,
    -0.1478917, -0.3333655, 0.3839771, 0.0614377, -0.4274865, 0.2413029, 0.2565988, -0.423023,
    0.0429808, 0.3925844, -0.3210043, -0.1652532
}
local WANT_NOCACHE_LOGITS = {
    -0.1341743, -0.3351208, 0.3715026, 0.0720273, -0.4225115, 0.2271901, 0.2616182, -0.4124649,
    0.0304843, 0.3908763, -0.3072981, -0.1732516, -0.15929, -0.3184293, 0.3847977, 0.0459203,
    -0.4173179, 0.249619, 0.2405408, -0.4199671, 0.0568746, 0.3796892, -0.3257658, -0.1489859,
    -0.1669742, -0.3176639, 0.3919398, 0.040097, -0.420336, 0.2575798, 0.2379212, -0.4260726,
    0.0638181, 0.3808774, -0.3335508, -0.1446609
}
local WANT_STEP_LOGITS = {
    {
        -0.1341743, -0.3351208, 0.3715026, 0.0720273, -0.4225115, 0.2271901, 0.2616182,
        -0.4124649, 0.0304843, 0.3908763, -0.3072981, -0.1732516
    },
    {
        -0.15929, -0.3184293, 0.3847977, 0.0459203, -0.4173179, 0.249619, 0.2405408, -0.4199671,
        0.0568746, 0.3796892, -0.3257658, -0.1489859
    },
    {
        -0.1669742, -0.3176639, 0.3919398, 0.040097, -0.420336, 0.2575798, 0.2379212,
        -0.4260726, 0.0638181, 0.3808774, -0.3335508, -0.1446609
    },
}
local WANT_NAMES = {
    'encoder.conv1.weight', 'encoder.conv1.bias', 'encoder.conv2.weight', 'encoder.conv2.bias',
    'encoder.blocks.0.attn.query.weight', 'encoder.blocks.0.attn.query.bias',
    'encoder.blocks.0.attn.key.weight', 'encoder.blocks.0.attn.value.weight',
    'encoder.blocks.0.attn.value.bias', 'encoder.blocks.0.attn.out.weight',
    'encoder.blocks.0.attn.out.bias', 'encoder.blocks.0.attn_ln.weight',
    'encoder.blocks.0.attn_ln.bias', 'encoder.blocks.0.mlp.0.weight',
    'encoder.blocks.0.mlp.0.bias', 'encoder.blocks.0.mlp.2.weight',
    'encoder.blocks.0.mlp.2.bias', 'encoder.blocks.0.mlp_ln.weight',
    'encoder.blocks.0.mlp_ln.bias', 'encoder.ln_post.weight', 'encoder.ln_post.bias',
    'decoder.positional_embedding', 'decoder.token_embedding.weight',
    'decoder.blocks.0.attn.query.weight', 'decoder.blocks.0.attn.query.bias',
    'decoder.blocks.0.attn.key.weight', 'decoder.blocks.0.attn.value.weight',
    'decoder.blocks.0.attn.value.bias', 'decoder.blocks.0.attn.out.weight',
    'decoder.blocks.0.attn.out.bias', 'decoder.blocks.0.attn_ln.weight',
    'decoder.blocks.0.attn_ln.bias', 'decoder.blocks.0.cross_attn.query.weight',
    'decoder.blocks.0.cross_attn.query.bias', 'decoder.blocks.0.cross_attn.key.weight',
    'decoder.blocks.0.cross_attn.value.weight', 'decoder.blocks.0.cross_attn.value.bias',
    'decoder.blocks.0.cross_attn.out.weight', 'decoder.blocks.0.cross_attn.out.bias',
    'decoder.blocks.0.cross_attn_ln.weight', 'decoder.blocks.0.cross_attn_ln.bias',
    'decoder.blocks.0.mlp.0.weight', 'decoder.blocks.0.mlp.0.bias',
    'decoder.blocks.0.mlp.2.weight', 'decoder.blocks.0.mlp.2.bias',
    'decoder.blocks.0.mlp_ln.weight', 'decoder.blocks.0.mlp_ln.bias', 'decoder.ln.weight',
    'decoder.ln.bias'
}

---------------------------------------------------------------------------------------------
-- 1. openai/whisper whisper/audio.py
---------------------------------------------------------------------------------------------
-- def exact_div(x, y): (whisper/utils.py)
local function exact_div(x, y)
    assert(x % y == 0)
    -- return x // y
    return math.floor(x / y)
end

-- hard-coded audio hyperparameters
local SAMPLE_RATE = 16000 -- luacheck: ignore
-- N_FFT = 400
local N_FFT = 16
-- HOP_LENGTH = 160
local HOP_LENGTH = 4
-- N_SAMPLES = CHUNK_LENGTH * SAMPLE_RATE  # 480000 samples in a 30-second chunk
local N_SAMPLES = 64 -- 16 frames: the tiny encoder's 2 * n_audio_ctx
local N_FRAMES = exact_div(N_SAMPLES, HOP_LENGTH) -- frames in a mel spectrogram input

-- def load_audio(file: str, sr: int = SAMPLE_RATE):
-- GAP: not ported: it runs the ffmpeg CLI (subprocess) and reads s16le bytes with NumPy; the
-- spec makes its audio as a tensor

-- def pad_or_trim(array, length: int = N_SAMPLES, *, axis: int = -1):
local function pad_or_trim(array, length, axis)
    length = length or N_SAMPLES
    axis = axis or -1
    -- if torch.is_tensor(array): (the NumPy branch is not ported: tide's arrays are tensors)
    assert(tide.is_tensor(array), "pad_or_trim: expected a tensor")
    if array.shape[axis] > length then
        -- array = array.index_select(dim=axis, index=torch.arange(length, device=array.device))
        array = array:index_select(axis, tide.arange(1, length + 1, { device = array.device }))
    end

    if array.shape[axis] < length then
        -- pad_widths = [(0, 0)] * array.ndim
        local pad_widths = {}
        for i = 1, array.ndim do
            pad_widths[i] = { 0, 0 }
        end
        -- pad_widths[axis] = (0, length - array.shape[axis]) (a negative axis counts from the end)
        pad_widths[axis < 0 and array.ndim + axis + 1 or axis] = { 0, length - array.shape[axis] }
        -- array = F.pad(array, [pad for sizes in pad_widths[::-1] for pad in sizes])
        local pad = {}
        for i = #pad_widths, 1, -1 do
            for _, p in ipairs(pad_widths[i]) do
                pad[#pad + 1] = p
            end
        end
        array = F.pad(array, pad)
    end
    return array
end

-- @lru_cache(maxsize=None) def mel_filters(device, n_mels: int) -> torch.Tensor:
local mel_filters_cache = {}
local function mel_filters(device, n_mels)
    -- assert n_mels in {80, 128}, f"Unsupported n_mels: {n_mels}"
    assert(n_mels == 4, "Unsupported n_mels: " .. tostring(n_mels))
    local key = tostring(device) .. "/" .. n_mels
    if mel_filters_cache[key] == nil then
        -- with np.load(filters_path, allow_pickle=False) as f:
        --     return torch.from_numpy(f[f"mel_{n_mels}"]).to(device)
        -- GAP: no npz reader in tide; the 4 x 9 filterbank is pasted above
        mel_filters_cache[key] = tide.tensor(MEL_FILTERS_4x9):to(device)
    end
    return mel_filters_cache[key]
end

-- def log_mel_spectrogram(audio, n_mels: int = 80, padding: int = 0, device=None):
local function log_mel_spectrogram(audio, n_mels, padding, device)
    n_mels = n_mels or 4
    padding = padding or 0
    -- if not torch.is_tensor(audio):
    if not tide.is_tensor(audio) then
        -- if isinstance(audio, str): audio = load_audio(audio) (GAP: load_audio, above)
        assert(type(audio) ~= "string", "log_mel_spectrogram: load_audio is not ported")
        -- audio = torch.from_numpy(audio) (a Lua list here)
        audio = tide.tensor(audio)
    end

    if device ~= nil then
        audio = audio:to(device)
    end
    if padding > 0 then
        -- audio = F.pad(audio, (0, padding))
        audio = F.pad(audio, { 0, padding })
    end
    -- window = torch.hann_window(N_FFT).to(audio.device)
    local window = tide.hann_window(N_FFT):to(audio.device)
    -- stft = torch.stft(audio, N_FFT, HOP_LENGTH, window=window, return_complex=True)
    local stft = tide.stft(audio, N_FFT, HOP_LENGTH, { window = window, return_complex = true })
    -- magnitudes = stft[..., :-1].abs() ** 2
    local magnitudes = stft[{ "...", { 1, -2 } }]:abs() ^ 2

    local filters = mel_filters(audio.device, n_mels)
    -- mel_spec = filters @ magnitudes
    local mel_spec = filters:matmul(magnitudes)

    -- log_spec = torch.clamp(mel_spec, min=1e-10).log10()
    local log_spec = tide.clamp(mel_spec, { min = 1e-10 }):log10()
    -- log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    log_spec = tide.maximum(log_spec, log_spec:max() - 8.0)
    log_spec = (log_spec + 4.0) / 4.0
    return log_spec
end

---------------------------------------------------------------------------------------------
-- 2. openai/whisper whisper/model.py
---------------------------------------------------------------------------------------------
-- @dataclass class ModelDimensions: (a table of the ten fields)
local function ModelDimensions(t)
    return t
end

-- try: from torch.nn.functional import scaled_dot_product_attention; SDPA_AVAILABLE = True
local SDPA_AVAILABLE = F.scaled_dot_product_attention ~= nil

-- Python's dict keeps insertion order, which TextDecoder's next(iter(kv_cache.values()))
-- relies on (the first entry is the first self-attention key, whose length is the offset);
-- a Lua table keyed by modules iterates in hash order, so the cache is this ordered table
local function dict(src)
    local store, order = {}, {}
    local d = setmetatable({}, {
        __index = store,
        __newindex = function(_, k, v)
            if store[k] == nil then
                order[#order + 1] = k
            end
            store[k] = v
        end,
        keys = order,
    })
    for _, k in ipairs(src and getmetatable(src).keys or {}) do
        d[k] = src[k]
    end
    return d
end
-- next(iter(d.values())), nil for an empty dict
local function first_value(d)
    local k = getmetatable(d).keys[1]
    return k ~= nil and d[k] or nil
end

-- class LayerNorm(nn.LayerNorm):
local LayerNorm = nn.LayerNorm:extend("WhisperLayerNorm")
function LayerNorm:forward(x)
    -- return super().forward(x.float()).type(x.dtype)
    return nn.LayerNorm.forward(self, x:float()):type(x.dtype)
end

-- class Linear(nn.Linear):
local Linear = nn.Linear:extend("WhisperLinear")
function Linear:forward(x)
    return F.linear(
        x,
        self.weight:to(x.dtype),
        -- None if self.bias is None else self.bias.to(x.dtype),
        self.bias ~= nil and self.bias:to(x.dtype) or nil
    )
end

-- class Conv1d(nn.Conv1d):
local Conv1d = nn.Conv1d:extend("WhisperConv1d")
function Conv1d:_conv_forward(x, weight, bias)
    -- return super()._conv_forward(
    --     x, weight.to(x.dtype), None if bias is None else bias.to(x.dtype)
    -- )
    return nn.Conv1d._conv_forward(
        self, x, weight:to(x.dtype), bias ~= nil and bias:to(x.dtype) or nil
    )
end

-- def sinusoids(length, channels, max_timescale=10000):
local function sinusoids(length, channels, max_timescale)
    max_timescale = max_timescale or 10000
    assert(channels % 2 == 0)
    -- log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
    local log_timescale_increment = math.log(max_timescale) / (math.floor(channels / 2) - 1)
    -- inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    local inv_timescales = tide.exp(-log_timescale_increment
        * tide.arange(math.floor(channels / 2)))
    -- scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
    local scaled_time = tide.arange(length)[{ {}, tide.newaxis }]
        * inv_timescales[{ tide.newaxis, {} }]
    -- return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)
    return tide.cat({ tide.sin(scaled_time), tide.cos(scaled_time) }, { dim = 2 })
end

-- class MultiHeadAttention(nn.Module):
local MultiHeadAttention = nn.Module:extend("WhisperMultiHeadAttention")
MultiHeadAttention.use_sdpa = true

-- @contextmanager def disable_sdpa(): (a function that runs fn with use_sdpa off)
local function disable_sdpa(fn)
    local prev_state = MultiHeadAttention.use_sdpa
    MultiHeadAttention.use_sdpa = false
    local ok, err = pcall(fn)
    MultiHeadAttention.use_sdpa = prev_state
    if not ok then
        error(err, 0)
    end
end

function MultiHeadAttention:init(n_state, n_head)
    self.n_head = n_head
    self.query = Linear(n_state, n_state)
    -- self.key = Linear(n_state, n_state, bias=False)
    self.key = Linear(n_state, n_state, { bias = false })
    self.value = Linear(n_state, n_state)
    self.out = Linear(n_state, n_state)
end

-- def forward(self, x, xa=None, mask=None, kv_cache=None):
function MultiHeadAttention:forward(x, xa, mask, kv_cache)
    local q = self.query(x)

    local k, v
    -- if kv_cache is None or xa is None or self.key not in kv_cache:
    if kv_cache == nil or xa == nil or kv_cache[self.key] == nil then
        -- hooks, if installed (i.e. kv_cache is not None), will prepend the cached kv tensors;
        -- otherwise, perform key/value projections for self- or cross-attention as usual.
        -- k = self.key(x if xa is None else xa)
        k = self.key(xa == nil and x or xa)
        v = self.value(xa == nil and x or xa)
    else
        -- for cross-attention, calculate keys and values once and reuse in subsequent calls.
        k = kv_cache[self.key]
        v = kv_cache[self.value]
    end

    local wv, qk = self:qkv_attention(q, k, v, mask)
    return self.out(wv), qk
end

function MultiHeadAttention:qkv_attention(q, k, v, mask)
    -- n_batch, n_ctx, n_state = q.shape
    local _, n_ctx, n_state = unpack(q.shape)
    -- scale = (n_state // self.n_head) ** -0.25
    local scale = math.floor(n_state / self.n_head) ^ -0.25
    -- q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
    q = q:view(q.shape[1], q.shape[2], self.n_head, -1):permute(1, 3, 2, 4)
    k = k:view(k.shape[1], k.shape[2], self.n_head, -1):permute(1, 3, 2, 4)
    v = v:view(v.shape[1], v.shape[2], self.n_head, -1):permute(1, 3, 2, 4)

    local out, qk
    -- if SDPA_AVAILABLE and MultiHeadAttention.use_sdpa:
    if SDPA_AVAILABLE and MultiHeadAttention.use_sdpa then
        -- a = scaled_dot_product_attention(q, k, v, is_causal=mask is not None and n_ctx > 1)
        local a = F.scaled_dot_product_attention(q, k, v, { is_causal = mask ~= nil and n_ctx > 1 })
        -- out = a.permute(0, 2, 1, 3).flatten(start_dim=2)
        out = a:permute(1, 3, 2, 4):flatten({ start_dim = 3 })
        qk = nil
    else
        -- qk = (q * scale) @ (k * scale).transpose(-1, -2)
        qk = (q * scale):matmul((k * scale):transpose(-1, -2))
        if mask ~= nil then
            -- qk = qk + mask[:n_ctx, :n_ctx]
            qk = qk + mask[{ { 1, n_ctx }, { 1, n_ctx } }]
        end
        qk = qk:float()

        local w = F.softmax(qk, { dim = -1 }):to(q.dtype)
        out = w:matmul(v):permute(1, 3, 2, 4):flatten({ start_dim = 3 })
        qk = qk:detach()
    end

    return out, qk
end

-- class ResidualAttentionBlock(nn.Module):
local ResidualAttentionBlock = nn.Module:extend("WhisperResidualAttentionBlock")
function ResidualAttentionBlock:init(n_state, n_head, cross_attention)
    self.attn = MultiHeadAttention(n_state, n_head)
    self.attn_ln = LayerNorm(n_state)

    -- MultiHeadAttention(n_state, n_head) if cross_attention else None
    self.cross_attn = cross_attention and MultiHeadAttention(n_state, n_head) or nil
    self.cross_attn_ln = cross_attention and LayerNorm(n_state) or nil

    local n_mlp = n_state * 4
    self.mlp = nn.Sequential(
        Linear(n_state, n_mlp), nn.GELU(), Linear(n_mlp, n_state)
    )
    self.mlp_ln = LayerNorm(n_state)
end

-- def forward(self, x, xa=None, mask=None, kv_cache=None):
function ResidualAttentionBlock:forward(x, xa, mask, kv_cache)
    -- x = x + self.attn(self.attn_ln(x), mask=mask, kv_cache=kv_cache)[0]
    x = x + (self.attn(self.attn_ln(x), nil, mask, kv_cache))
    if self.cross_attn then
        -- x = x + self.cross_attn(self.cross_attn_ln(x), xa, kv_cache=kv_cache)[0]
        x = x + (self.cross_attn(self.cross_attn_ln(x), xa, nil, kv_cache))
    end
    x = x + self.mlp(self.mlp_ln(x))
    return x
end

-- class AudioEncoder(nn.Module):
local AudioEncoder = nn.Module:extend("AudioEncoder")
function AudioEncoder:init(n_mels, n_ctx, n_state, n_head, n_layer)
    -- self.conv1 = Conv1d(n_mels, n_state, kernel_size=3, padding=1)
    self.conv1 = Conv1d(n_mels, n_state, { kernel_size = 3, padding = 1 })
    self.conv2 = Conv1d(n_state, n_state, { kernel_size = 3, stride = 2, padding = 1 })
    self:register_buffer("positional_embedding", sinusoids(n_ctx, n_state))

    -- nn.ModuleList([ResidualAttentionBlock(n_state, n_head) for _ in range(n_layer)])
    local blocks = {}
    for _ = 1, n_layer do
        blocks[#blocks + 1] = ResidualAttentionBlock(n_state, n_head)
    end
    self.blocks = nn.ModuleList(blocks)
    self.ln_post = LayerNorm(n_state)
end

function AudioEncoder:forward(x)
    -- x : torch.Tensor, shape = (batch_size, n_mels, n_ctx) the mel spectrogram of the audio
    x = F.gelu(self.conv1(x))
    x = F.gelu(self.conv2(x))
    x = x:permute(1, 3, 2)

    -- assert x.shape[1:] == self.positional_embedding.shape, "incorrect audio shape"
    assert(x.shape[{ { 2, -1 } }] == self.positional_embedding.shape, "incorrect audio shape")
    x = (x + self.positional_embedding):to(x.dtype)

    -- for block in self.blocks:
    for _, block in ipairs(self.blocks) do
        x = block(x)
    end

    x = self.ln_post(x)
    return x
end

-- class TextDecoder(nn.Module):
local TextDecoder = nn.Module:extend("TextDecoder")
function TextDecoder:init(n_vocab, n_ctx, n_state, n_head, n_layer)
    self.token_embedding = nn.Embedding(n_vocab, n_state)
    self.positional_embedding = nn.Parameter(tide.empty(n_ctx, n_state))

    -- [ResidualAttentionBlock(n_state, n_head, cross_attention=True) for _ in range(n_layer)]
    local blocks = {}
    for _ = 1, n_layer do
        blocks[#blocks + 1] = ResidualAttentionBlock(n_state, n_head, true)
    end
    self.blocks = nn.ModuleList(blocks)
    self.ln = LayerNorm(n_state)

    -- mask = torch.empty(n_ctx, n_ctx).fill_(-np.inf).triu_(1)
    local mask = tide.empty(n_ctx, n_ctx):fill_(-math.huge):triu_(1)
    -- self.register_buffer("mask", mask, persistent=False)
    self:register_buffer("mask", mask, { persistent = false })
end

-- def forward(self, x, xa, kv_cache=None):
function TextDecoder:forward(x, xa, kv_cache)
    -- offset = next(iter(kv_cache.values())).shape[1] if kv_cache else 0
    local offset = (kv_cache and first_value(kv_cache)) and first_value(kv_cache).shape[2] or 0
    x = (
        self.token_embedding(x)
        -- + self.positional_embedding[offset : offset + x.shape[-1]]
        + self.positional_embedding[{ { offset + 1, offset + x.shape[-1] } }]
    )
    x = x:to(xa.dtype)

    for _, block in ipairs(self.blocks) do
        -- x = block(x, xa, mask=self.mask, kv_cache=kv_cache)
        x = block(x, xa, self.mask, kv_cache)
    end

    x = self.ln(x)
    local logits = (
        -- x @ torch.transpose(self.token_embedding.weight.to(x.dtype), 0, 1)
        x:matmul(tide.transpose(self.token_embedding.weight:to(x.dtype), 1, 2))
    ):float()

    return logits
end

-- class Whisper(nn.Module):
local Whisper = nn.Module:extend("Whisper")
function Whisper:init(dims)
    self.dims = dims
    self.encoder = AudioEncoder(
        self.dims.n_mels,
        self.dims.n_audio_ctx,
        self.dims.n_audio_state,
        self.dims.n_audio_head,
        self.dims.n_audio_layer
    )
    self.decoder = TextDecoder(
        self.dims.n_vocab,
        self.dims.n_text_ctx,
        self.dims.n_text_state,
        self.dims.n_text_head,
        self.dims.n_text_layer
    )
    -- use the last half among the decoder layers for time alignment by default
    -- all_heads = torch.zeros(self.dims.n_text_layer, self.dims.n_text_head, dtype=torch.bool)
    local all_heads = tide.zeros(self.dims.n_text_layer, self.dims.n_text_head,
        { dtype = tide.bool })
    -- all_heads[self.dims.n_text_layer // 2 :] = True
    all_heads[{ { math.floor(self.dims.n_text_layer / 2) + 1, -1 } }] = true
    -- self.register_buffer("alignment_heads", all_heads.to_sparse(), persistent=False)
    self:register_buffer("alignment_heads", all_heads:to_sparse(), { persistent = false })
end

function Whisper:embed_audio(mel)
    return self.encoder(mel)
end

function Whisper:logits(tokens, audio_features)
    return self.decoder(tokens, audio_features)
end

function Whisper:forward(mel, tokens)
    return self.decoder(tokens, self.encoder(mel))
end

function Whisper:install_kv_cache_hooks(cache)
    -- cache = {**cache} if cache is not None else {}
    cache = dict(cache)
    local hooks = {}

    local function save_to_cache(module, _, output)
        -- if module not in cache or output.shape[1] > self.dims.n_text_ctx:
        if cache[module] == nil or output.shape[2] > self.dims.n_text_ctx then
            -- save as-is, for the first token or cross attention
            cache[module] = output
        else
            cache[module] = tide.cat({ cache[module], output }, { dim = 2 }):detach()
        end
        return cache[module]
    end

    local function install_hooks(layer)
        if tide.isinstance(layer, MultiHeadAttention) then
            -- hooks.append(layer.key.register_forward_hook(save_to_cache))
            hooks[#hooks + 1] = layer.key:register_forward_hook(save_to_cache)
            hooks[#hooks + 1] = layer.value:register_forward_hook(save_to_cache)
        end
    end

    self.decoder:apply(install_hooks)
    return cache, hooks
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
local function tiny_dims()
    return ModelDimensions({ n_mels = 4, n_audio_ctx = 8, n_audio_state = 8, n_audio_head = 2,
        n_audio_layer = 1, n_vocab = 12, n_text_ctx = 6, n_text_state = 8, n_text_head = 2,
        n_text_layer = 1 })
end

-- the audio: a sum of two sines, 200 samples
local function two_sines()
    local n = tide.arange(200, { dtype = "float64" })
    return (0.5 * tide.sin(0.3 * n) + 0.25 * tide.sin(1.7 * n)):float()
end

-- the model with PyTorch's weights: the formula over the i-th named parameter (0-based there)
local function formula_model()
    local model = Whisper(tiny_dims())
    tide.no_grad(function()
        for i, pair in ipairs(model:named_parameters()) do
            local p = pair[2]
            local j = tide.arange(p:numel(), { dtype = "float64" })
            p:copy_((0.3 * tide.sin(2.9 * j + 1.3 * (i - 1) + 0.3)):view(p.shape):float())
        end
    end)
    return model
end

local function flat(t)
    return t:float():reshape(-1):tolist()
end

describe("openai/whisper whisper/audio.py", function()
    it("log_mel_spectrogram: PyTorch's log mel of two sines; pad_or_trim", function()
        local signal = two_sines()
        -- the whole signal: 1 + 200 / 4 frames, the last dropped
        local full_mel = log_mel_spectrogram(signal)
        assert.are.same({ 4, 50 }, full_mel.shape)
        assert.are.equal("float32", full_mel.dtype)
        assert_close_list(WANT_FULL_MEL, flat(full_mel), 1e-5, "full mel")
        -- the stft underneath: complex, onesided N_FFT / 2 + 1 bins
        local stft = tide.stft(signal, N_FFT, HOP_LENGTH,
            { window = tide.hann_window(N_FFT), return_complex = true })
        assert.is_true(stft:is_complex())
        assert.are.same({ 9, 51 }, stft.shape)
        -- the audio trimmed to N_SAMPLES (index_select), then padded from 40 samples (F.pad)
        local mel = log_mel_spectrogram(pad_or_trim(signal))
        assert.are.same({ 4, N_FRAMES }, mel.shape)
        assert_close_list(WANT_MEL, flat(mel), 1e-5, "mel")
        local short = pad_or_trim(signal[{ { 1, 40 } }])
        assert.are.same({ N_SAMPLES }, short.shape)
        assert.are.equal(0, short[{ { 41, -1 } }]:abs():max():item())
        local short_mel = log_mel_spectrogram(short)
        assert_close_list(WANT_SHORT_MEL, flat(short_mel), 1e-5, "short mel")
        -- log_mel_spectrogram's padding pads the same zeros; a Lua list is taken as audio
        local padded = log_mel_spectrogram(signal[{ { 1, 40 } }], 4, 24)
        assert.are.equal(0, (padded - short_mel):abs():max():item())
        assert.are.equal(0, (log_mel_spectrogram(flat(short)) - short_mel):abs():max():item())
        -- pad_or_trim over the frames of a mel (axis -1) keeps the first N_FRAMES
        local trimmed = pad_or_trim(full_mel, N_FRAMES)
        assert.are.equal(0, (trimmed - full_mel[{ {}, { 1, N_FRAMES } }]):abs():max():item())
        -- the zero padding's bins are clamp(min=1e-10): log10 -10, (-10 + 4) / 4
        assert.are.equal(-1.5, short_mel[1][-1]:item())
        -- louder audio lifts log_spec.max() so that torch.maximum's floor (max - 8) is above
        -- -10: the padding's bins sit on it, (max - 8 + 4) / 4 = the normalized max - 2
        local loud = log_mel_spectrogram(short * 1000)
        assert.is_true(math.abs(loud:min():item() - (loud:max():item() - 2)) < 1e-6)
        assert.are.equal(loud:min():item(), loud[1][-1]:item())
        assert.has_error(function() mel_filters(tide.device("cpu"), 80) end)
    end)
end)

describe("openai/whisper whisper/model.py", function()
    it("Whisper: PyTorch's parameter order; the encoder output of the log mel", function()
        local model = formula_model()
        -- the sparse alignment_heads buffer: PyTorch's indices [[0, 0], [0, 1]] (1-based
        -- here), bool values; non-persistent, so not in state_dict
        local heads = model.alignment_heads
        assert.is_true(heads.is_sparse)
        assert.are.same({ { 1, 1 }, { 1, 2 } }, heads:indices():totable())
        assert.are.same({ true, true }, heads:values():totable())
        assert.is_nil(model:state_dict().alignment_heads)
        assert.is_true(rawequal(heads, model:buffers()[1]))
        local names = {}
        for _, pair in ipairs(model:named_parameters()) do
            -- PyTorch's names with 0-based list indices ("blocks.0"); tide's are 1-based
            names[#names + 1] = (pair[1]:gsub("%.(%d+)%.", function(d)
                return "." .. (tonumber(d) - 1) .. "."
            end))
        end
        assert.are.same(WANT_NAMES, names)
        -- the buffers: the sinusoids and the -inf causal mask (not persistent)
        assert.are.same({ 8, 8 }, model.encoder.positional_embedding.shape)
        assert.are.equal(-math.huge, model.decoder.mask[1][2]:item())
        assert.are.equal(0, model.decoder.mask[2][1]:item())
        assert.is_nil(model:state_dict()["decoder.mask"])

        local mel = log_mel_spectrogram(pad_or_trim(two_sines()))
        -- audio_features = model.embed_audio(mel.unsqueeze(0))
        local audio_features = model:embed_audio(mel:unsqueeze(1))
        assert.are.same({ 1, 8, 8 }, audio_features.shape)
        assert_close_list(WANT_AUDIO_FEATURES, flat(audio_features), 1e-5, "audio features")
        -- the written-out attention (PyTorch 1.13's path) agrees
        disable_sdpa(function()
            assert_close_list(WANT_AUDIO_FEATURES, flat(model:embed_audio(mel:unsqueeze(1))),
                1e-5, "audio features, no SDPA")
        end)
        -- a mel of the wrong length fails the shape assert
        assert.has_error(function() model:embed_audio(tide.randn(1, 4, 12)) end)
    end)

    it("logits of a prompt, and a greedy decode of 3 tokens with the kv-cache hooks", function()
        local model = formula_model()
        model:eval()
        local mel = log_mel_spectrogram(pad_or_trim(two_sines()))
        tide.no_grad(function()
            local audio_features = model:embed_audio(mel:unsqueeze(1))
            -- model.logits(torch.tensor([[3, 7, 1]]), audio_features)
            local prompt = model:logits(tide.tensor({ { 4, 8, 2 } }), audio_features)
            assert.are.same({ 1, 3, 12 }, prompt.shape)
            assert_close_list(WANT_PROMPT_LOGITS, flat(prompt), 1e-5, "prompt logits")
            -- the forward of mel and tokens is the same
            local fwd = model(mel:unsqueeze(1), tide.tensor({ { 4, 8, 2 } }))
            assert_close_list(WANT_PROMPT_LOGITS, flat(fwd), 1e-5, "forward")

            local kv_cache, hooks = model:install_kv_cache_hooks()
            assert.are.equal(4, #hooks) -- key and value of the self and cross attention
            -- toks = [5] (PyTorch's id 4 + 1)
            local toks = { 6 }
            for step = 1, 3 do
                -- x = tokens[:, -1:] after the first step (the cache holds the rest)
                local x = tide.tensor({ { toks[#toks] } })
                local logits = model.decoder(x, audio_features, kv_cache)
                assert.are.same({ 1, 1, 12 }, logits.shape)
                -- the offset is the cached length: the positional embedding of this step
                assert.are.equal(step, kv_cache[model.decoder.blocks[1].attn.key].shape[2])
                assert_close_list(WANT_STEP_LOGITS[step], flat(logits[{ {}, -1 }]), 1e-5,
                    "step " .. step)
                -- toks.append(int(logits[0, -1].argmax()))
                toks[#toks + 1] = logits[1][-1]:argmax():item()
            end
            -- PyTorch's greedy tokens [5, 9, 2, 2], 1-based
            assert.are.same({ 6, 10, 3, 3 }, toks)
            -- the self-attention cache: the 3 steps; the cross one: the 8 audio frames, once
            local block = model.decoder.blocks[1]
            assert.are.same({ 1, 3, 8 }, kv_cache[block.attn.value].shape)
            assert.are.same({ 1, 8, 8 }, kv_cache[block.cross_attn.key].shape)
            -- for hook in hooks: hook.remove()
            for _, hook in ipairs(hooks) do
                hook:remove()
            end
            -- without the cache: the same 3 rows of logits at once
            local nocache = model:logits(tide.tensor({ { 6, 10, 3 } }), audio_features)
            assert_close_list(WANT_NOCACHE_LOGITS, flat(nocache), 1e-5, "no cache")
            disable_sdpa(function()
                local explicit = model:logits(tide.tensor({ { 6, 10, 3 } }), audio_features)
                assert_close_list(WANT_NOCACHE_LOGITS, flat(explicit), 1e-5, "no cache, no SDPA")
            end)
        end)
    end)
end)
