-- ported_scripts151_spec.lua — allenai/allennlp's allennlp/nn/util.py, ported line for line at
-- tiny sizes on fixed inputs (sin of a ramp): get_lengths_from_binary_sequence_mask,
-- get_mask_from_sequence_lengths, sort_batch_by_length, masked_softmax (memory_efficient both
-- ways), masked_log_softmax, masked_max, masked_mean, masked_flip, viterbi_decode (allowed start
-- / end transitions, top_k, tag observations), get_text_field_mask, weighted_sum,
-- sequence_cross_entropy_with_logits (average, label_smoothing, gamma, alpha), replace_masked_
-- values, flatten_and_batch_shift_indices, batched_index_select, batched_span_select,
-- combine_tensors, logsumexp, add_sentence_boundary_token_ids, remove_sentence_boundaries and
-- the *_value_of_dtype helpers. The Python line stands above each Lua line that differs from it.
-- Values are PyTorch 1.13's for the same inputs (REF below).
-- Indices: tags, class targets, span starts/ends, sort permutations and the indices of
-- batched_index_select are 1-based; get_range_vector stays 0-based (it is an offset, never an
-- index), so flatten_and_batch_shift_indices' offsets are batch * sequence_length as PyTorch's.
-- viterbi_decode's unobserved tag stays -1 (a 1-based tag is never -1).
local tide = require("tide")
local F = tide.nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local REF = {
    vit_path = {2, 1, 1, 3},
    vit_score = 5.210687160491943,
    vit_k_paths = {{2, 1, 1, 3}, {2, 1, 3, 3}, {2, 1, 1, 2}},
    vit_k_scores = {5.210687160491943, 5.021908760070801, 4.398129940032959},
    vit_se_path = {3, 1, 1, 3},
    vit_se_score = 100000.0,
    vit_sek_paths = {{3, 1, 1, 3}, {3, 1, 1, 3}},
    vit_sek_scores = {100000.0, 0.0},
    vit_obs_path = {3, 3, 1, 3},
    vit_obs_score = 100000.25,
    msm_False = {
        0.047097329050302505, 0.32533955574035645, 0.0, 0.6275631189346313,
        0.8718344569206238, 0.11141761392354965, 0.0, 0.01674797013401985,
        0.007310264278203249, 0.051086533814668655, 0.0, 0.9416031837463379, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    },
    msm_grad_False = {
        0.0213406290858984, 0.19628110527992249, 0.0, -0.21762174367904663,
        0.03204568848013878, -0.03664699196815491, 0.0, 0.004601301159709692,
        -0.0026202613953500986, 0.00921904481947422, -0.0, -0.006598783191293478, 0.0, -0.0,
        -0.0, -0.0, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.0, -0.0,
    },
    msm_True = {
        0.047097329050302505, 0.32533952593803406, 0.0, 0.6275631189346313,
        0.8718344569206238, 0.11141761392354965, 0.0, 0.01674797013401985,
        0.007310264278203249, 0.051086533814668655, 0.0, 0.9416031837463379, 0.25, 0.25,
        0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
    },
    msm_grad_True = {
        0.021340632811188698, 0.1962810903787613, 0.0, -0.21762169897556305,
        0.032045699656009674, -0.03664699196815491, 0.0, 0.004601301625370979,
        -0.002620261162519455, 0.009219043888151646, 0.0, -0.006598770152777433, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    },
    mlsm = {
        -3.055539131164551, -1.1228859424591064, -30.032798767089844, -0.46591103076934814,
        -0.13715572655200958, -2.194469928741455, -33.69045639038086, -4.089478015899658,
        -4.91847562789917, -2.9742343425750732, -30.987321853637695, -0.060171354562044144,
        0.0, -31.540109634399414, -33.596839904785156, -35.13648986816406, 0.0,
        -28.850486755371094, -26.895206451416016, -24.98736572265625, 0.0,
        -30.368188858032227, -31.996074676513672, -34.05164337158203,
    },
    mmax = {
        2.9563491344451904, 1.0049644708633423, -3.4028234663852886e+38, 2.5637967586517334,
        -1.8544113636016846, 2.9718220233917236,
    },
    mmean = {
        0.5024822354316711, -1.0523496866226196, 0.17081093788146973, -0.1788649559020996,
        2.7678093910217285, -0.44855815172195435, -1.0994373559951782, -1.8926507234573364,
    },
    sce1 = {1.0335185527801514},
    sce_grad1 = {
        0.014347429387271404, 0.05203966051340103, -0.1470266431570053, 0.08063957095146179,
        -0.07331874966621399, 0.04482673108577728, 0.015819121152162552,
        0.012672899290919304, 0.0, 0.0, 0.0, 0.0, 0.3422783613204956, -0.38271307945251465,
        0.029769020155072212, 0.01066572219133377, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    },
    sce2 = {0.8946964144706726},
    sce_grad2 = {
        0.019129905849695206, 0.06938621401786804, -0.19603553414344788,
        0.10751943290233612, -0.09775833785533905, 0.05976897478103638,
        0.021092161536216736, 0.01689719967544079, 0.0, 0.0, 0.0, 0.0, 0.22818557918071747,
        -0.25514206290245056, 0.01984601467847824, 0.00711048161610961, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0,
    },
    sce3 = {0.6170521974563599, 1.4499847888946533},
    sce_grad3 = {
        0.02869485877454281, 0.10407932102680206, -0.2940532863140106, 0.16127914190292358,
        -0.14663749933242798, 0.08965346217155457, 0.031638242304325104,
        0.025345798581838608, 0.0, 0.0, 0.0, 0.0, 0.6845567226409912, -0.7654261589050293,
        0.059538040310144424, 0.02133144438266754, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    },
    sce4 = {1.1254740953445435},
    sce_grad4 = {
        0.00809742882847786, 0.04578965902328491, -0.12827664613723755, 0.07438956946134567,
        -0.05456876382231712, 0.03857672959566116, 0.009569119662046432,
        0.006422898266464472, 0.0, 0.0, 0.0, 0.0, 0.3297783434391022, -0.3452130854129791,
        0.017269019037485123, -0.0018342785770073533, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0,
    },
    sce5 = {0.5089160203933716},
    sce_grad5 = {
        0.01112777553498745, 0.04036163166165352, -0.11403293907642365, 0.06254354119300842,
        -0.016855916008353233, 0.010305625386536121, 0.0036368018481880426,
        0.002913488307967782, 0.0, 0.0, 0.0, 0.0, 0.37875279784202576, -0.42349639534950256,
        0.032941315323114395, 0.011802300810813904, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    },
    sce6 = {0.344422847032547},
    sce_grad6 = {
        0.003586857346817851, -0.04949008673429489, 0.025743339210748672,
        0.020159892737865448, -0.05498906224966049, 0.03362004831433296,
        0.011864340864121914, 0.00950467400252819, 0.0, 0.0, 0.0, 0.0, 0.0855695903301239,
        -0.09567826986312866, 0.007442255038768053, 0.0026664305478334427, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0,
    },
    sce7 = {0.22020062804222107},
    sce_grad7 = {
        0.004304228816181421, 0.015611899085342884, -0.04410799592733383,
        0.024191873148083687, -0.007331875152885914, 0.004482673015445471,
        0.001581912161782384, 0.0012672899756580591, 0.0, 0.0, 0.0, 0.0,
        0.06845567375421524, -0.07654261589050293, 0.0059538041241467,
        0.0021331445313990116, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    },
    sce8 = {0.10657483339309692},
    sce_grad8 = {
        0.005000210367143154, 0.018136296421289444, -0.05124012753367424,
        0.028103627264499664, -0.003500695340335369, 0.002140308264642954,
        0.0007553037139587104, 0.0006050834199413657, 0.0, 0.0, 0.0, 0.0,
        0.050932008773088455, -0.05694881081581116, 0.0044297161512076855,
        0.001587090315297246, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    },
    span_emb = {
        0.0, 0.6442176699638367, 0.9854497313499451, 0.8632093667984009,
        0.33498814702033997, -0.35078322887420654, -0.8715757727622986, -0.9824526309967041,
        -0.6312666535377502, 0.01681390032172203, 0.6569865942001343, 0.9881682395935059,
        0.854598879814148, 0.3190983533859253, -0.36647912859916687, 0.0,
        0.6442176699638367, 0.9854497313499451, 0.854598879814148, 0.3190983533859253,
        -0.36647912859916687, 0.0, 0.6442176699638367, 0.9854497313499451, 0.0,
        0.6442176699638367, 0.9854497313499451, 0.033623047173023224, 0.6695697903633118,
        0.9906073808670044, -0.8796957731246948, -0.979177713394165, -0.6181371212005615,
        -0.8796957731246948, -0.979177713394165, -0.6181371212005615, 0.8457468152046204,
        0.30311834812164307, -0.3820714056491852, -0.8875670433044434, -0.9756259918212891,
        -0.6048328280448914, 0.05042268708348274, 0.6819636225700378, 0.9927663803100586,
        -0.8796957731246948, -0.979177713394165, -0.6181371212005615, 0.033623047173023224,
        0.6695697903633118, 0.9906073808670044, -0.8796957731246948, -0.979177713394165,
        -0.6181371212005615,
    },
    span_mask = {1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0},
    span_shape = {2, 3, 3, 3},
    fbsi = {1, 5, 8, 8},
    bis = {
        0.0, 0.6442176699638367, 0.9854497313499451, 0.854598879814148, 0.3190983533859253,
        -0.36647912859916687, 0.8457468152046204, 0.30311834812164307, -0.3820714056491852,
        0.8457468152046204, 0.30311834812164307, -0.3820714056491852,
    },
    lens = {3, 1, 2},
    mfl = {1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0},
    sbl_t = {
        0.9854497313499451, 0.8632093667984009, 0.33498814702033997, -0.35078322887420654,
        0.0, 0.6442176699638367,
    },
    sbl_l = {5, 3, 2},
    sbl_r = {3, 1, 2},
    sbl_p = {2, 3, 1},
    mflip = {
        0.33498814702033997, -0.35078322887420654, 0.9854497313499451, 0.8632093667984009,
        0.0, 0.6442176699638367, 0.6569865942001343, 0.9881682395935059,
        -0.6312666535377502, 0.01681390032172203, 0.0, 0.0,
    },
    tfm2 = {1, 1, 0, 1, 0, 0},
    tfm3 = {1, 1, 0, 1, 0, 0},
    tfm3only = {1, 1, 0, 1, 0, 0},
    ws23 = {
        -0.28514567017555237, -0.0021782685071229935, 0.2818135619163513,
        0.4332640767097473, -0.15468621253967285, -0.37805917859077454, -0.423625111579895,
        -0.26995351910591125,
    },
    ws33 = {
        -0.28514567017555237, -0.0021782685071229935, 0.2818135619163513,
        0.4332640767097473, 0.42490124702453613, 0.37470483779907227, 0.14827892184257507,
        -0.14788490533828735, -0.27831101417541504, 0.004537209868431091,
        0.2852514982223511, 0.43180757761001587, 0.43569472432136536, 0.3734780550003052,
        0.13560888171195984, -0.16603922843933105,
    },
    ws4 = {
        -0.28514567017555237, -0.0021782685071229935, 0.2818135619163513,
        0.4332640767097473, 0.42490124702453613, 0.37470483779907227, 0.14827892184257507,
        -0.14788490533828735, -0.14387381076812744, -0.3761582374572754,
        -0.43152958154678345, -0.28394579887390137, -0.2796329855918884,
        0.005099242553114891, 0.2874332070350647, 0.43458276987075806, 0.42621704936027527,
        0.37100958824157715, 0.14131057262420654, -0.15484905242919922, -0.2725219130516052,
        0.011855900287628174, 0.2906576693058014, 0.4327586591243744, 0.43676966428756714,
        0.3696642518043518, 0.12869995832443237, -0.1727938950061798, -0.16848105192184448,
        -0.3851029872894287, -0.42060500383377075, -0.25828996300697327,
        -0.26665568351745605, 0.019171252846717834, 0.29598164558410645, 0.4335872530937195,
        0.4377211928367615, 0.3657459020614624, 0.12175466120243073, -0.17949968576431274,
    },
    rmv = {
        0.0, 0.6442176699638367, 0.9854497313499451, -7.0, 0.33498814702033997, -7.0, -7.0,
        -7.0, -0.6312666535377502, 0.01681390032172203, -7.0, -7.0,
    },
    comb = {
        0.0, 0.6442176699638367, 0.9854497313499451, 0.8414709568023682, 0.9916648268699646,
        0.6754631996154785, 0.0, 0.6388480067253113, 0.6656350493431091,
        -0.8414709568023682, -0.34744715690612793, 0.30998653173446655, 0.0,
        0.649632453918457, 1.458924412727356, 0.8632093667984009, 0.33498814702033997,
        -0.35078322887420654, 0.04158066213130951, -0.6118578910827637, -0.9775301218032837,
        0.03589281812310219, -0.20496514439582825, 0.34290117025375366, 0.8216286897659302,
        0.9468460083007812, 0.6267468929290771, 20.759876251220703, -0.5474933981895447,
        0.3588464558124542,
    },
    lse = {5.1001996994018555, 4.387058258056641},
    lsek = {4.329310894012451, 3.4142403602600098, 4.928502082824707},
    asb2 = {1, 5, 6, 2, 0, 1, 7, 2, 0, 0},
    asb2m = {1, 1, 1, 1, 0, 1, 1, 1, 0, 0},
    asb3 = {
        9.0, 8.0, 2.0, 2.6442177295684814, 2.98544979095459, 2.8632092475891113, 7.0, 6.0,
        0.0, 0.0, 9.0, 8.0, 1.1284241676330566, 1.017547369003296, 7.0, 6.0,
        2.656986713409424, 2.988168239593506, 0.0, 0.0,
    },
    asb3m = {1, 1, 1, 1, 0, 1, 1, 1, 1, 0},
    rsb = {
        2.0, 2.6442177295684814, 2.98544979095459, 2.8632092475891113, 0.0, 0.0,
        1.1284241676330566, 1.017547369003296, 7.0, 6.0, 0.0, 0.0,
    },
    rsbm = {1, 1, 0, 1, 1, 0},
}

---------------------------------------------------------------------------------------------
-- allennlp/nn/util.py
---------------------------------------------------------------------------------------------
local function info_value_of_dtype(dtype)
    if dtype == "bool" then
        error("Does not support torch.bool")
    -- elif dtype.is_floating_point:
    elseif dtype:match("^float") or dtype == "bfloat16" then
        return tide.finfo(dtype)
    else
        return tide.iinfo(dtype)
    end
end

local function min_value_of_dtype(dtype)
    return info_value_of_dtype(dtype).min
end

local function max_value_of_dtype(dtype)
    return info_value_of_dtype(dtype).max
end

local function tiny_value_of_dtype(dtype)
    -- if not dtype.is_floating_point:
    if not (dtype:match("^float") or dtype == "bfloat16") then
        error("Only supports floating point dtypes.")
    end
    if dtype == "float32" or dtype == "float64" then
        return 1e-13
    elseif dtype == "float16" then
        return 1e-4
    else
        error("Does not support dtype " .. dtype)
    end
end

local function get_lengths_from_binary_sequence_mask(mask)
    return mask:sum(-1)
end

local function get_mask_from_sequence_lengths(sequence_lengths, max_length)
    -- ones = sequence_lengths.new_ones(sequence_lengths.size(0), max_length)
    local ones = sequence_lengths:new_ones(sequence_lengths:size(1), max_length)
    -- range_tensor = ones.cumsum(dim=1)
    local range_tensor = ones:cumsum({ dim = 2 })
    -- return sequence_lengths.unsqueeze(1) >= range_tensor
    return sequence_lengths:unsqueeze(2):ge(range_tensor)
end

local function sort_batch_by_length(tensor, sequence_lengths)
    -- sorted_sequence_lengths, permutation_index = sequence_lengths.sort(0, descending=True)
    local sorted_sequence_lengths, permutation_index = sequence_lengths:sort(1, true)
    -- sorted_tensor = tensor.index_select(0, permutation_index)
    local sorted_tensor = tensor:index_select(1, permutation_index)
    -- index_range = torch.arange(0, len(sequence_lengths), device=sequence_lengths.device)
    local index_range = tide.arange(1, #sequence_lengths + 1) -- 1-based restoration indices
    -- _, reverse_mapping = permutation_index.sort(0, descending=False)
    local _, reverse_mapping = permutation_index:sort(1, false)
    -- restoration_indices = index_range.index_select(0, reverse_mapping)
    local restoration_indices = index_range:index_select(1, reverse_mapping)
    return sorted_tensor, sorted_sequence_lengths, restoration_indices, permutation_index
end

-- def masked_softmax(vector, mask, dim=-1, memory_efficient=False):
local function masked_softmax(vector, mask, dim, memory_efficient)
    dim = dim or -1
    local result
    if mask == nil then
        -- result = torch.nn.functional.softmax(vector, dim=dim)
        result = F.softmax(vector, { dim = dim })
    else
        -- while mask.dim() < vector.dim():
        while mask:dim() < vector:dim() do
            -- mask = mask.unsqueeze(1)
            mask = mask:unsqueeze(2)
        end
        if not memory_efficient then
            -- result = torch.nn.functional.softmax(vector * mask, dim=dim)
            result = F.softmax(vector * mask, { dim = dim })
            result = result * mask
            -- result = result / (result.sum(dim=dim, keepdim=True) + tiny_value_of_dtype(...))
            result = result / (result:sum({ dim = dim, keepdim = true })
                + tiny_value_of_dtype(result.dtype))
        else
            -- masked_vector = vector.masked_fill(~mask, min_value_of_dtype(vector.dtype))
            local masked_vector = vector:masked_fill(mask:logical_not(),
                min_value_of_dtype(vector.dtype))
            result = F.softmax(masked_vector, { dim = dim })
        end
    end
    return result
end

local function masked_log_softmax(vector, mask, dim)
    dim = dim or -1
    if mask ~= nil then
        while mask:dim() < vector:dim() do
            mask = mask:unsqueeze(2)
        end
        -- vector = vector + (mask + tiny_value_of_dtype(vector.dtype)).log()
        vector = vector + (mask + tiny_value_of_dtype(vector.dtype)):log()
    end
    return F.log_softmax(vector, { dim = dim })
end

local function masked_max(vector, mask, dim, keepdim)
    -- replaced_vector = vector.masked_fill(~mask, min_value_of_dtype(vector.dtype))
    local replaced_vector = vector:masked_fill(mask:logical_not(), min_value_of_dtype(vector.dtype))
    -- max_value, _ = replaced_vector.max(dim=dim, keepdim=keepdim)
    local max_value = replaced_vector:max({ dim = dim, keepdim = keepdim or false })
    return max_value
end

local function masked_mean(vector, mask, dim, keepdim)
    keepdim = keepdim or false
    local replaced_vector = vector:masked_fill(mask:logical_not(), 0.0)
    -- value_sum = torch.sum(replaced_vector, dim=dim, keepdim=keepdim)
    local value_sum = tide.sum(replaced_vector, { dim = dim, keepdim = keepdim })
    local value_count = tide.sum(mask, { dim = dim, keepdim = keepdim })
    -- return value_sum / value_count.float().clamp(min=tiny_value_of_dtype(torch.float))
    return value_sum / value_count:float():clamp({ min = tiny_value_of_dtype("float32") })
end

local function masked_flip(padded_sequence, sequence_lengths)
    assert(padded_sequence:size(1) == #sequence_lengths)
    local num_timesteps = padded_sequence:size(2)
    -- flipped_padded_sequence = torch.flip(padded_sequence, [1])
    local flipped_padded_sequence = tide.flip(padded_sequence, { 2 })
    -- sequences = [flipped_padded_sequence[i, num_timesteps - length :] for i, length in ...]
    local sequences = {}
    for i, length in ipairs(sequence_lengths) do
        sequences[i] = flipped_padded_sequence[{ i, { num_timesteps - length + 1, -1 } }]
    end
    -- return torch.nn.utils.rnn.pad_sequence(sequences, batch_first=True)
    return tide.nn.utils.rnn.pad_sequence(sequences, true)
end

-- def viterbi_decode(tag_sequence, transition_matrix, tag_observations=None,
--                    allowed_start_transitions=None, allowed_end_transitions=None, top_k=None):
local function viterbi_decode(tag_sequence, transition_matrix, opts)
    opts = opts or {}
    local tag_observations = opts.tag_observations
    local allowed_start_transitions = opts.allowed_start_transitions
    local allowed_end_transitions = opts.allowed_end_transitions
    local top_k, flatten_output = opts.top_k, nil
    if top_k == nil then
        top_k = 1
        flatten_output = true
    elseif top_k >= 1 then
        flatten_output = false
    else
        error("top_k must be either None or an integer >=1. Instead received " .. top_k)
    end
    -- sequence_length, num_tags = list(tag_sequence.size())
    local sequence_length, num_tags = tag_sequence:size(1), tag_sequence:size(2)
    local has_start_end_restrictions = allowed_end_transitions ~= nil
        or allowed_start_transitions ~= nil
    if has_start_end_restrictions then
        if allowed_end_transitions == nil then
            allowed_end_transitions = tide.zeros(num_tags)
        end
        if allowed_start_transitions == nil then
            allowed_start_transitions = tide.zeros(num_tags)
        end
        num_tags = num_tags + 2
        local new_transition_matrix = tide.zeros(num_tags, num_tags)
        -- new_transition_matrix[:-2, :-2] = transition_matrix
        new_transition_matrix[{ { 1, -3 }, { 1, -3 } }] = transition_matrix
        -- allowed_start_transitions = torch.cat([allowed_start_transitions,
        --                                        torch.tensor([-math.inf, -math.inf])])
        allowed_start_transitions = tide.cat({ allowed_start_transitions,
            tide.tensor({ -math.huge, -math.huge }) })
        allowed_end_transitions = tide.cat({ allowed_end_transitions,
            tide.tensor({ -math.huge, -math.huge }) })
        -- new_transition_matrix[-2, :] = allowed_start_transitions
        new_transition_matrix[{ -2, {} }] = allowed_start_transitions
        -- new_transition_matrix[-1, :] = -math.inf
        new_transition_matrix[{ -1, {} }] = -math.huge
        -- new_transition_matrix[:, -1] = allowed_end_transitions
        new_transition_matrix[{ {}, -1 }] = allowed_end_transitions
        -- new_transition_matrix[:, -2] = -math.inf
        new_transition_matrix[{ {}, -2 }] = -math.huge
        transition_matrix = new_transition_matrix
    end
    -- if tag_observations:
    if tag_observations and #tag_observations > 0 then
        if #tag_observations ~= sequence_length then
            error("Observations were provided, but they were not the same length "
                .. "as the sequence.")
        end
    else
        tag_observations = {}
        for t = 1, sequence_length do tag_observations[t] = -1 end
    end
    if has_start_end_restrictions then
        -- tag_observations = [num_tags - 2] + tag_observations + [num_tags - 1]  (0-based tags)
        local obs = { num_tags - 1 }
        for _, o in ipairs(tag_observations) do obs[#obs + 1] = o end
        obs[#obs + 1] = num_tags
        tag_observations = obs
        local zero_sentinel = tide.zeros(1, num_tags)
        -- extra_tags_sentinel = torch.ones(sequence_length, 2) * -math.inf
        local extra_tags_sentinel = tide.ones(sequence_length, 2) * -math.huge
        tag_sequence = tide.cat({ tag_sequence, extra_tags_sentinel }, -1)
        tag_sequence = tide.cat({ zero_sentinel, tag_sequence, zero_sentinel }, 1)
        sequence_length = tag_sequence:size(1)
    end
    local path_scores = {}
    local path_indices = {}
    -- if tag_observations[0] != -1:
    if tag_observations[1] ~= -1 then
        local one_hot = tide.zeros(num_tags)
        one_hot[tag_observations[1]] = 100000.0
        -- path_scores.append(one_hot.unsqueeze(0))
        path_scores[#path_scores + 1] = one_hot:unsqueeze(1)
    else
        -- path_scores.append(tag_sequence[0, :].unsqueeze(0))
        path_scores[#path_scores + 1] = tag_sequence[{ 1, {} }]:unsqueeze(1)
    end
    -- for timestep in range(1, sequence_length):
    for timestep = 2, sequence_length do
        -- summed_potentials = path_scores[timestep - 1].unsqueeze(2) + transition_matrix
        local summed_potentials = path_scores[timestep - 1]:unsqueeze(3) + transition_matrix
        summed_potentials = summed_potentials:view(-1, num_tags)
        -- max_k = min(summed_potentials.size()[0], top_k)
        local max_k = math.min(summed_potentials:size(1), top_k)
        -- scores, paths = torch.topk(summed_potentials, k=max_k, dim=0)
        local scores, paths = tide.topk(summed_potentials, max_k, { dim = 1 })
        local observation = tag_observations[timestep]
        if tag_observations[timestep - 1] ~= -1 and observation ~= -1 then
            -- if transition_matrix[tag_observations[timestep - 1], observation] < -10000:
            -- (logger.warning only: no value depends on it)
            local _ = transition_matrix[{ tag_observations[timestep - 1], observation }]:item()
        end
        if observation ~= -1 then
            local one_hot = tide.zeros(num_tags)
            one_hot[observation] = 100000.0
            path_scores[#path_scores + 1] = one_hot:unsqueeze(1)
        else
            -- path_scores.append(tag_sequence[timestep, :] + scores)
            path_scores[#path_scores + 1] = tag_sequence[{ timestep, {} }] + scores
        end
        -- path_indices.append(paths.squeeze())
        path_indices[#path_indices + 1] = paths:squeeze()
    end
    -- path_scores_v = path_scores[-1].view(-1)
    local path_scores_v = path_scores[#path_scores]:view(-1)
    local max_k = math.min(path_scores_v:size(1), top_k)
    -- viterbi_scores, best_paths = torch.topk(path_scores_v, k=max_k, dim=0)
    local viterbi_scores, best_paths = tide.topk(path_scores_v, max_k, { dim = 1 })
    local viterbi_paths = {}
    for i = 1, max_k do
        -- viterbi_path = [best_paths[i]]  (flat 1-based indices into (k, num_tags))
        local viterbi_path = { best_paths[i]:item() }
        -- for backward_timestep in reversed(path_indices):
        for b = #path_indices, 1, -1 do
            -- viterbi_path.append(int(backward_timestep.view(-1)[viterbi_path[-1]]))
            local backward_timestep = path_indices[b]
            local last = viterbi_path[#viterbi_path]
            viterbi_path[#viterbi_path + 1] = backward_timestep:view(-1)[last]:item()
        end
        -- viterbi_path.reverse()
        local reversed = {}
        for j = #viterbi_path, 1, -1 do reversed[#reversed + 1] = viterbi_path[j] end
        viterbi_path = reversed
        if has_start_end_restrictions then
            -- viterbi_path = viterbi_path[1:-1]
            viterbi_path = { unpack(viterbi_path, 2, #viterbi_path - 1) }
        end
        -- viterbi_path = [j % num_tags for j in viterbi_path]  (1-based: (j - 1) % n + 1)
        for j = 1, #viterbi_path do
            viterbi_path[j] = (viterbi_path[j] - 1) % num_tags + 1
        end
        viterbi_paths[#viterbi_paths + 1] = viterbi_path
    end
    if flatten_output then
        -- return viterbi_paths[0], viterbi_scores[0]
        return viterbi_paths[1], viterbi_scores[1]
    end
    return viterbi_paths, viterbi_scores
end

-- text_field_tensors: { indexer_name = { argument_name = tensor } } (Lua tables have no order;
-- the sort by dim below is what the code relies on)
local function get_text_field_mask(text_field_tensors, num_wrapping_dims, padding_id)
    num_wrapping_dims, padding_id = num_wrapping_dims or 0, padding_id or 0
    local masks = {}
    for _, indexer_tensors in pairs(text_field_tensors) do
        if indexer_tensors.mask ~= nil then
            masks[#masks + 1] = indexer_tensors.mask:bool()
        end
    end
    if #masks == 1 then
        return masks[1]
    elseif #masks > 1 then
        error("found two mask outputs; not sure which to use!")
    end
    local tensor_dims = {}
    for _, indexer_output in pairs(text_field_tensors) do
        for _, tensor in pairs(indexer_output) do
            tensor_dims[#tensor_dims + 1] = { tensor:dim(), tensor }
        end
    end
    -- tensor_dims.sort(key=lambda x: x[0])
    table.sort(tensor_dims, function(a, b) return a[1] < b[1] end)
    local smallest_dim = tensor_dims[1][1] - num_wrapping_dims
    if smallest_dim == 2 then
        local token_tensor = tensor_dims[1][2]
        -- return token_tensor != padding_id
        return token_tensor:ne(padding_id)
    elseif smallest_dim == 3 then
        local character_tensor = tensor_dims[1][2]
        -- return (character_tensor != padding_id).any(dim=-1)
        return character_tensor:ne(padding_id):any({ dim = -1 })
    else
        error("Expected a tensor with dimension 2 or 3, found " .. smallest_dim)
    end
end

local function weighted_sum(matrix, attention)
    if attention:dim() == 2 and matrix:dim() == 3 then
        -- return attention.unsqueeze(1).bmm(matrix).squeeze(1)
        return attention:unsqueeze(2):bmm(matrix):squeeze(2)
    end
    if attention:dim() == 3 and matrix:dim() == 3 then
        return attention:bmm(matrix)
    end
    if matrix:dim() - 1 < attention:dim() then
        -- expanded_size = list(matrix.size())
        local expanded_size = matrix:size()
        -- for i in range(attention.dim() - matrix.dim() + 1):
        for i = 1, attention:dim() - matrix:dim() + 1 do
            matrix = matrix:unsqueeze(2)
            -- expanded_size.insert(i + 1, attention.size(i + 1))  (0-based i)
            table.insert(expanded_size, i + 1, attention:size(i + 1))
        end
        matrix = matrix:expand(expanded_size)
    end
    local intermediate = attention:unsqueeze(-1):expand_as(matrix) * matrix
    return intermediate:sum({ dim = -2 })
end

-- def sequence_cross_entropy_with_logits(logits, targets, weights, average="batch",
--                                        label_smoothing=None, gamma=None, alpha=None):
-- targets are 1-based classes; opts.average = false stands for Python's average=None
local function sequence_cross_entropy_with_logits(logits, targets, weights, opts)
    opts = opts or {}
    local average = opts.average
    if average == nil then average = "batch" end
    local label_smoothing, gamma, alpha = opts.label_smoothing, opts.gamma, opts.alpha
    if not (average == false or average == "token" or average == "batch") then
        error("Got average " .. tostring(average) .. ", expected one of None, 'token', or 'batch'")
    end
    weights = weights:to(logits.dtype)
    -- non_batch_dims = tuple(range(1, len(weights.shape)))
    local non_batch_dims = {}
    for d = 2, weights:dim() do non_batch_dims[#non_batch_dims + 1] = d end
    local weights_batch_sum = weights:sum({ dim = non_batch_dims })
    -- logits_flat = logits.view(-1, logits.size(-1))
    local logits_flat = logits:view(-1, logits:size(-1))
    local log_probs_flat = F.log_softmax(logits_flat, { dim = -1 })
    -- targets_flat = targets.view(-1, 1).long()
    local targets_flat = targets:view(-1, 1):long()
    if gamma then
        local probs_flat = log_probs_flat:exp()
        -- probs_flat = torch.gather(probs_flat, dim=1, index=targets_flat)
        probs_flat = tide.gather(probs_flat, 2, targets_flat)
        local focal_factor = (1.0 - probs_flat) ^ gamma
        -- focal_factor = focal_factor.view(*targets.size())
        focal_factor = focal_factor:view(targets:size())
        weights = weights * focal_factor
    end
    if alpha ~= nil then
        local alpha_factor
        if type(alpha) == "number" then
            -- alpha_factor = torch.tensor([1.0 - float(alpha), float(alpha)], dtype=...)
            alpha_factor = tide.tensor({ 1.0 - alpha, alpha }, { dtype = weights.dtype })
        elseif type(alpha) == "table" or tide.is_tensor(alpha) then
            alpha_factor = tide.tensor(alpha, { dtype = weights.dtype })
            if alpha_factor:dim() == 0 then
                alpha_factor = alpha_factor:view(1)
                alpha_factor = tide.cat({ 1 - alpha_factor, alpha_factor })
            end
        else
            error("alpha must be float, list of float, or torch.FloatTensor, "
                .. type(alpha) .. " provided.")
        end
        -- alpha_factor = torch.gather(alpha_factor, dim=0, index=targets_flat.view(-1))
        --     .view(*targets.size())
        alpha_factor = tide.gather(alpha_factor, 1, targets_flat:view(-1)):view(targets:size())
        weights = weights * alpha_factor
    end
    local negative_log_likelihood_flat
    if label_smoothing ~= nil and label_smoothing > 0.0 then
        local num_classes = logits:size(-1)
        local smoothing_value = label_smoothing / num_classes
        -- smoothed_targets = torch.full_like(log_probs_flat, smoothing_value).scatter_(
        --     -1, targets_flat, 1.0 - label_smoothing + smoothing_value)
        local smoothed_targets = tide.full_like(log_probs_flat, smoothing_value):scatter_(
            -1, targets_flat, 1.0 - label_smoothing + smoothing_value)
        negative_log_likelihood_flat = -log_probs_flat * smoothed_targets
        negative_log_likelihood_flat = negative_log_likelihood_flat:sum(-1, true)
    else
        -- negative_log_likelihood_flat = -torch.gather(log_probs_flat, dim=1, index=targets_flat)
        negative_log_likelihood_flat = -tide.gather(log_probs_flat, 2, targets_flat)
    end
    local negative_log_likelihood = negative_log_likelihood_flat:view(targets:size())
    negative_log_likelihood = negative_log_likelihood * weights
    local tiny = tiny_value_of_dtype(negative_log_likelihood.dtype)
    if average == "batch" then
        -- per_batch_loss = negative_log_likelihood.sum(non_batch_dims) / (weights_batch_sum + tiny)
        local per_batch_loss = negative_log_likelihood:sum(non_batch_dims)
            / (weights_batch_sum + tiny)
        -- num_non_empty_sequences = (weights_batch_sum > 0).sum() + tiny
        local num_non_empty_sequences = weights_batch_sum:gt(0):sum() + tiny
        return per_batch_loss:sum() / num_non_empty_sequences
    elseif average == "token" then
        return negative_log_likelihood:sum() / (weights_batch_sum:sum() + tiny)
    else
        local per_batch_loss = negative_log_likelihood:sum(non_batch_dims)
            / (weights_batch_sum + tiny)
        return per_batch_loss
    end
end

local function replace_masked_values(tensor, mask, replace_with)
    if tensor:dim() ~= mask:dim() then
        error(string.format("tensor.dim() (%d) != mask.dim() (%d)", tensor:dim(), mask:dim()))
    end
    return tensor:masked_fill(mask:logical_not(), replace_with)
end

local function _get_combination(combination, tensors)
    -- if combination.isdigit():
    if combination:match("^%d+$") then
        -- index = int(combination) - 1   (Lua lists are 1-based: the digit is the index)
        local index = tonumber(combination)
        return tensors[index]
    else
        if #combination ~= 3 then
            error("Invalid combination: " .. combination)
        end
        local first_tensor = _get_combination(combination:sub(1, 1), tensors)
        local second_tensor = _get_combination(combination:sub(3, 3), tensors)
        local operation = combination:sub(2, 2)
        if operation == "*" then
            return first_tensor * second_tensor
        elseif operation == "/" then
            return first_tensor / second_tensor
        elseif operation == "+" then
            return first_tensor + second_tensor
        elseif operation == "-" then
            return first_tensor - second_tensor
        else
            error("Invalid operation: " .. operation)
        end
    end
end

local function combine_tensors(combination, tensors)
    if #tensors > 9 then
        error("Double-digit tensor lists not currently supported")
    end
    -- combination = combination.replace("x", "1").replace("y", "2")
    combination = combination:gsub("x", "1"):gsub("y", "2")
    local to_concatenate = {}
    -- [_get_combination(piece, tensors) for piece in combination.split(",")]
    for piece in combination:gmatch("[^,]+") do
        to_concatenate[#to_concatenate + 1] = _get_combination(piece, tensors)
    end
    return tide.cat(to_concatenate, { dim = -1 })
end

local function logsumexp(tensor, dim, keepdim)
    dim, keepdim = dim or -1, keepdim or false
    -- max_score, _ = tensor.max(dim, keepdim=keepdim)
    local max_score = tensor:max({ dim = dim, keepdim = keepdim })
    local stable_vec
    if keepdim then
        stable_vec = tensor - max_score
    else
        stable_vec = tensor - max_score:unsqueeze(dim)
    end
    -- return max_score + (stable_vec.exp().sum(dim, keepdim=keepdim)).log()
    return max_score + stable_vec:exp():sum({ dim = dim, keepdim = keepdim }):log()
end

local function get_device_of(tensor)
    -- if not tensor.is_cuda: return -1
    if not tensor.is_cuda then
        return -1
    else
        return tensor:get_device()
    end
end

-- 0-based on purpose: an offset, never an index
local function get_range_vector(size, _device)
    -- return torch.arange(0, size, dtype=torch.long)
    return tide.arange(0, size, { dtype = "int64" })
end

-- indices are 1-based into dim 2 of the target; so are the flattened ones returned
local function flatten_and_batch_shift_indices(indices, sequence_length)
    -- if torch.max(indices) >= sequence_length or torch.min(indices) < 0:
    if tide.max(indices):item() > sequence_length or tide.min(indices):item() < 1 then
        error(string.format("All elements in indices should be in range (1, %d)",
            sequence_length))
    end
    local offsets = get_range_vector(indices:size(1), get_device_of(indices)) * sequence_length
    -- for _ in range(len(indices.size()) - 1):
    for _ = 1, indices:dim() - 1 do
        offsets = offsets:unsqueeze(2)
    end
    local offset_indices = indices + offsets
    offset_indices = offset_indices:view(-1)
    return offset_indices
end

local function batched_index_select(target, indices, flattened_indices)
    if flattened_indices == nil then
        flattened_indices = flatten_and_batch_shift_indices(indices, target:size(2))
    end
    local flattened_target = target:view(-1, target:size(-1))
    local flattened_selected = flattened_target:index_select(1, flattened_indices)
    -- selected_shape = list(indices.size()) + [target.size(-1)]
    local selected_shape = indices:size() + { target:size(-1) }
    local selected_targets = flattened_selected:view(selected_shape)
    return selected_targets
end

-- spans: (batch, num_spans, 2) 1-based inclusive starts and ends
local function batched_span_select(target, spans)
    -- span_starts, span_ends = spans.split(1, dim=-1)
    local parts = spans:split(1, { dim = -1 })
    local span_starts, span_ends = parts[1], parts[2]
    local span_widths = span_ends - span_starts
    -- max_batch_span_width = span_widths.max().item() + 1
    local max_batch_span_width = span_widths:max():item() + 1
    local max_span_range_indices = get_range_vector(max_batch_span_width, get_device_of(target))
        :view(1, 1, -1)
    -- span_mask = max_span_range_indices <= span_widths
    local span_mask = max_span_range_indices:le(span_widths)
    local raw_span_indices = span_starts + max_span_range_indices
    -- span_mask = span_mask & (raw_span_indices < target.size(1)) & (0 <= raw_span_indices)
    span_mask = span_mask:logical_and(raw_span_indices:le(target:size(2)))
        :logical_and(raw_span_indices:ge(1))
    -- span_indices = raw_span_indices * span_mask
    -- (1-based: a masked index goes to 1, where PyTorch's goes to 0, its first position)
    local span_indices = raw_span_indices:masked_fill(span_mask:logical_not(), 1)
    local span_embeddings = batched_index_select(target, span_indices)
    return span_embeddings, span_mask
end

local function add_sentence_boundary_token_ids(tensor, mask, sentence_begin_token,
                                               sentence_end_token)
    -- sequence_lengths = mask.sum(dim=1).detach().cpu().numpy()
    local sequence_lengths = mask:sum({ dim = 2 }):detach():cpu():tolist()
    local tensor_shape = tensor:size()
    local new_shape = tensor:size()
    new_shape[2] = tensor_shape[2] + 2
    local tensor_with_boundary_tokens = tensor:new_zeros(new_shape)
    local new_mask
    if #tensor_shape == 2 then
        -- tensor_with_boundary_tokens[:, 1:-1] = tensor
        tensor_with_boundary_tokens[{ {}, { 2, -2 } }] = tensor
        tensor_with_boundary_tokens[{ {}, 1 }] = sentence_begin_token
        -- for i, j in enumerate(sequence_lengths): ...[i, j + 1] = sentence_end_token
        for i, j in ipairs(sequence_lengths) do
            tensor_with_boundary_tokens[{ i, j + 2 }] = sentence_end_token
        end
        new_mask = tensor_with_boundary_tokens:ne(0)
    elseif #tensor_shape == 3 then
        tensor_with_boundary_tokens[{ {}, { 2, -2 }, {} }] = tensor
        sentence_begin_token = sentence_begin_token:detach():to(tensor.device)
        sentence_end_token = sentence_end_token:detach():to(tensor.device)
        for i, j in ipairs(sequence_lengths) do
            tensor_with_boundary_tokens[{ i, 1, {} }] = sentence_begin_token
            tensor_with_boundary_tokens[{ i, j + 2, {} }] = sentence_end_token
        end
        -- new_mask = (tensor_with_boundary_tokens > 0).sum(dim=-1) > 0
        new_mask = tensor_with_boundary_tokens:gt(0):sum({ dim = -1 }):gt(0)
    else
        error("add_sentence_boundary_token_ids only accepts 2D and 3D input")
    end
    return tensor_with_boundary_tokens, new_mask
end

local function remove_sentence_boundaries(tensor, mask)
    local sequence_lengths = mask:sum({ dim = 2 }):detach():cpu():tolist()
    local tensor_shape = tensor:size()
    local new_shape = tensor:size()
    new_shape[2] = tensor_shape[2] - 2
    local tensor_without_boundary_tokens = tensor:new_zeros(new_shape)
    -- new_mask = tensor.new_zeros((new_shape[0], new_shape[1]), dtype=torch.bool)
    local new_mask = tensor:new_zeros({ new_shape[1], new_shape[2] }, { dtype = "bool" })
    for i, j in ipairs(sequence_lengths) do
        if j > 2 then
            -- tensor_without_boundary_tokens[i, : (j - 2), :] = tensor[i, 1 : (j - 1), :]
            tensor_without_boundary_tokens[{ i, { 1, j - 2 }, {} }] =
                tensor[{ i, { 2, j - 1 }, {} }]
            new_mask[{ i, { 1, j - 2 } }] = true
        end
    end
    return tensor_without_boundary_tokens, new_mask
end

---------------------------------------------------------------------------------------------
-- tests: fixed inputs, PyTorch 1.13's values (REF)
---------------------------------------------------------------------------------------------
-- V(shape, s, off): sin(0.7 k + off) * s over the elements in order, float32 (as ref.py's)
local function V(shape, s, off)
    local n = 1
    for _, d in ipairs(shape) do n = n * d end
    return (tide.arange(0, n):double():mul(0.7):add(off or 0):sin() * (s or 1.0)):float()
        :view(shape)
end

-- the elements of t in order, numbers (bools as 0 / 1)
local function vals(t)
    t = t:detach()
    if t.dtype == "bool" then t = t:long() end
    return t:reshape(-1):tolist()
end

local function shape(t)
    return t:size()
end

local TOL = 1e-5

describe("allennlp nn/util.py (ported_scripts151)", function()
    it("viterbi_decode: plain, top_k, allowed start/end transitions, observations", function()
        local tags, trans = V({ 4, 3 }, 2.0), V({ 3, 3 }, 1.0, 0.3)
        local path, score = viterbi_decode(tags, trans)
        assert.same(REF.vit_path, path)
        assert_close_list({ REF.vit_score }, { score:item() }, TOL, "score")
        local paths, scores = viterbi_decode(tags, trans, { top_k = 3 })
        assert.same(REF.vit_k_paths, paths)
        assert_close_list(REF.vit_k_scores, vals(scores), TOL, "top_k scores")
        local st = tide.tensor({ 0.0, -math.huge, 0.5 })
        local en = tide.tensor({ -math.huge, 0.2, 0.0 })
        path, score = viterbi_decode(tags, trans, { allowed_start_transitions = st,
            allowed_end_transitions = en })
        assert.same(REF.vit_se_path, path)
        assert_close_list({ REF.vit_se_score }, { score:item() }, TOL, "start/end score")
        paths, scores = viterbi_decode(tags, trans, { allowed_start_transitions = st,
            allowed_end_transitions = en, top_k = 2 })
        -- the second path's final score ties (0) with three others: PyTorch's CPU topk takes
        -- index 4 among ties, tide's (stable) index 1, so only the best path is compared
        assert.same(REF.vit_sek_paths[1], paths[1])
        assert.same(4, #paths[2])
        assert_close_list(REF.vit_sek_scores, vals(scores), TOL, "start/end top_k scores")
        -- tag_observations=[-1, 2, -1, -1] (0-based tag 2 is tag 3)
        path, score = viterbi_decode(tags, trans, { tag_observations = { -1, 3, -1, -1 } })
        assert.same(REF.vit_obs_path, path)
        assert_close_list({ REF.vit_obs_score }, { score:item() }, TOL, "observed score")
    end)

    it("masked_softmax both ways, its gradient, masked_log_softmax / max / mean", function()
        local vec = V({ 2, 3, 4 }, 3.0)
        local mask = tide.tensor({ { 1, 1, 0, 1 }, { 0, 0, 0, 0 } }):bool()
        for _, me in ipairs({ false, true }) do
            local v = vec:clone():requires_grad_()
            local r = masked_softmax(v, mask, -1, me)
            local objective = (r * V({ 2, 3, 4 }, 1.0, 1.0)):sum()
            objective:backward()
            assert_close_list(REF[me and "msm_True" or "msm_False"], vals(r), TOL, "masked_softmax")
            assert_close_list(REF[me and "msm_grad_True" or "msm_grad_False"], vals(v.grad), TOL,
                "grad")
        end
        local m2 = tide.tensor({ { 1, 1, 0, 1 }, { 1, 0, 0, 0 } }):bool()
        assert_close_list(REF.mlsm, vals(masked_log_softmax(vec, m2)), TOL, "masked_log_softmax")
        local m3 = tide.tensor({ { { 1, 0, 1, 1 }, { 1, 1, 1, 1 }, { 0, 0, 0, 0 } },
            { { 1, 1, 1, 1 }, { 0, 1, 0, 0 }, { 1, 0, 0, 1 } } }):bool()
        assert_close_list(REF.mmax, vals(masked_max(vec, m3, -1)), TOL, "masked_max")
        local mm = masked_mean(vec, m3, 2, true)
        assert.same({ 2, 1, 4 }, shape(mm))
        assert_close_list(REF.mmean, vals(mm), TOL, "masked_mean")
    end)

    it("sequence_cross_entropy_with_logits: average, smoothing, gamma, alpha; grads", function()
        local logits = V({ 2, 3, 4 }, 2.0)
        -- targets = torch.tensor([[2, 0, 3], [1, 1, 0]])  (1-based here)
        local targets = tide.tensor({ { 3, 1, 4 }, { 2, 2, 1 } })
        local w = tide.tensor({ { 1, 1, 0 }, { 1, 0, 0 } })
        local alphas = { 0.1, 0.2, 0.3, 0.4 }
        local cfgs = { { average = "batch" }, { average = "token" }, { average = false },
            { label_smoothing = 0.1 }, { gamma = 2.0 }, { alpha = 0.25 }, { alpha = alphas },
            { gamma = 1.5, alpha = alphas, average = "token" } }
        for k, c in ipairs(cfgs) do
            local lg = logits:clone():requires_grad_()
            -- binary alpha: targets.clamp(max=1), 1-based max 2
            local t = c.alpha == 0.25 and targets:clamp({ max = 2 }) or targets
            local loss = sequence_cross_entropy_with_logits(lg, t, w, c)
            loss:sum():backward()
            assert_close_list(REF["sce" .. k], vals(loss), TOL, "loss " .. k)
            assert_close_list(REF["sce_grad" .. k], vals(lg.grad), TOL, "grad " .. k)
        end
    end)

    it("batched_span_select, flatten_and_batch_shift_indices, batched_index_select", function()
        local target = V({ 2, 5, 3 })
        -- spans = torch.tensor([[[0, 2], [3, 4], [4, 4]], [[1, 1], [2, 4], [0, 1]]])
        local spans = tide.tensor({ { { 1, 3 }, { 4, 5 }, { 5, 5 } },
            { { 2, 2 }, { 3, 5 }, { 1, 2 } } })
        local emb, smask = batched_span_select(target, spans)
        assert.same(REF.span_shape, shape(emb))
        assert_close_list(REF.span_emb, vals(emb), TOL, "span embeddings")
        assert.same(REF.span_mask, vals(smask))
        local idx = tide.tensor({ { 1, 5 }, { 3, 3 } })
        assert.same(REF.fbsi, vals(flatten_and_batch_shift_indices(idx, 5)))
        assert_close_list(REF.bis, vals(batched_index_select(target, idx)), TOL, "index select")
        assert.has_error(function() flatten_and_batch_shift_indices(idx, 4) end,
            "All elements in indices should be in range (1, 4)")
    end)

    it("lengths, masks, sort_batch_by_length, masked_flip, text field masks", function()
        local msk = tide.tensor({ { 1, 1, 1, 0 }, { 1, 0, 0, 0 }, { 1, 1, 0, 0 } }):bool()
        assert.same(REF.lens, vals(get_lengths_from_binary_sequence_mask(msk)))
        local mfl = get_mask_from_sequence_lengths(tide.tensor({ 2, 4, 1 }), 5)
        assert.same("bool", mfl.dtype)
        assert.same(REF.mfl, vals(mfl))
        local st, sl, ri, pi = sort_batch_by_length(V({ 3, 2 }), tide.tensor({ 2, 5, 3 }))
        assert_close_list(REF.sbl_t, vals(st), TOL, "sorted")
        assert.same(REF.sbl_l, vals(sl))
        assert.same(REF.sbl_r, vals(ri))
        assert.same(REF.sbl_p, vals(pi))
        assert_close_list(REF.mflip, vals(masked_flip(V({ 2, 4, 2 }), { 3, 2 })), TOL, "flip")
        local tokens = tide.tensor({ { 3, 4, 0 }, { 5, 0, 0 } })
        local chars = tide.tensor({ { { 1, 0 }, { 0, 2 }, { 0, 0 } },
            { { 4, 4 }, { 0, 0 }, { 0, 0 } } })
        assert.same(REF.tfm2, vals(get_text_field_mask({ tokens = { tokens = tokens } })))
        assert.same(REF.tfm3, vals(get_text_field_mask({ tokens = { tokens = tokens },
            chars = { token_characters = chars } })))
        assert.same(REF.tfm3only,
            vals(get_text_field_mask({ chars = { token_characters = chars } })))
        local given = tide.tensor({ { 1, 0, 1 } })
        assert.same({ 1, 0, 1 },
            vals(get_text_field_mask({ t = { tokens = tokens, mask = given } })))
    end)

    it("weighted_sum, replace_masked_values, combine_tensors, logsumexp", function()
        local mat = V({ 2, 3, 4 })
        assert_close_list(REF.ws23, vals(weighted_sum(mat, V({ 2, 3 }, 1.0, 0.5))), TOL, "ws 2-D")
        local ws33 = weighted_sum(mat, V({ 2, 2, 3 }, 1.0, 0.5))
        assert_close_list(REF.ws33, vals(ws33), TOL, "ws 3-D")
        local ws4 = weighted_sum(mat, V({ 2, 5, 3 }, 1.0, 0.5))
        assert_close_list(REF.ws4, vals(ws4), TOL, "ws expanded")
        local msk = tide.tensor({ { 1, 1, 1, 0 }, { 1, 0, 0, 0 }, { 1, 1, 0, 0 } }):bool()
        assert_close_list(REF.rmv, vals(replace_masked_values(V({ 3, 4 }), msk, -7.0)), TOL, "rmv")
        assert.has_error(function() replace_masked_values(V({ 3, 4, 1 }), msk, 0) end,
            "tensor.dim() (3) != mask.dim() (2)")
        local a, b = V({ 2, 3 }), V({ 2, 3 }, 1.0, 1.0)
        local comb = combine_tensors("x,y,x*y,1-2,1/2", { a, b })
        assert.same({ 2, 15 }, shape(comb))
        assert_close_list(REF.comb, vals(comb), TOL, "combine_tensors")
        assert_close_list(REF.lse, vals(logsumexp(V({ 2, 3 }, 5.0))), TOL, "logsumexp")
        assert_close_list(REF.lsek, vals(logsumexp(V({ 2, 3 }, 5.0), 1, true)), TOL, "keepdim")
    end)

    it("add_sentence_boundary_token_ids, remove_sentence_boundaries, dtype values", function()
        local tok = tide.tensor({ { 5, 6, 0 }, { 7, 0, 0 } })
        local m2 = tok:ne(0)
        local t2, nm2 = add_sentence_boundary_token_ids(tok, m2, 1, 2)
        assert.same(REF.asb2, vals(t2))
        assert.same(REF.asb2m, vals(nm2))
        local e3 = V({ 2, 3, 2 }) + 2
        local t3, nm3 = add_sentence_boundary_token_ids(e3, m2, tide.tensor({ 9, 8 }),
            tide.tensor({ 7, 6 }))
        assert_close_list(REF.asb3, vals(t3), TOL, "3-D boundaries")
        assert.same(REF.asb3m, vals(nm3))
        local rt, rm = remove_sentence_boundaries(t3, nm3)
        assert_close_list(REF.rsb, vals(rt), TOL, "removed")
        assert.same(REF.rsbm, vals(rm))
        assert.same("bool", rm.dtype)
        -- -3.4028234663852886e+38 9223372036854775807 0.0001 -1.7976931348623157e+308
        assert.is_true(ported.close(min_value_of_dtype("float32"), -3.4028234663852886e+38, 1e-12))
        assert.is_true(ported.close(min_value_of_dtype("float64"), -1.7976931348623157e+308, 1e-12))
        assert.is_true(max_value_of_dtype("int64") > 9.2e18)
        assert.same(1e-4, tiny_value_of_dtype("float16"))
        assert.same(1e-13, tiny_value_of_dtype("float32"))
        assert.has_error(function() tiny_value_of_dtype("int64") end)
        assert.has_error(function() min_value_of_dtype("bool") end)
    end)
end)
