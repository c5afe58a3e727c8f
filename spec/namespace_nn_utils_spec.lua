-- namespace_nn_utils_spec.lua — torch.nn.utils and its submodules (rnn, parametrize,
-- parametrizations, prune, stateless, fusion) audited against PyTorch 1.13: every public
-- callable is there, and each called with PyTorch's defaults and common options on the same
-- small inputs gives PyTorch's values (to 1e-6) and names (parameters, buffers, state_dict
-- keys). R holds PyTorch's output, pasted from a throwaway script; indices are tide's 1-based.
local tide = require("tide")
local nn = tide.nn
local U = nn.utils
local P = require("spec.support.porting")

-- PyTorch 1.13's values (torch.manual_seed(0) / (1) draws, float64)
local R = {
  W = {{1.5409960746765137, -0.293428897857666, -2.1787893772125244, 0.5684312582015991},
        {-1.0845223665237427, -1.3985954523086548, 0.40334683656692505, 0.8380263447761536},
        {-0.7192575931549072, -0.40334352850914, -0.5966353416442871, 0.18203648924827576}},
  B = {-0.8566746115684509, 1.1006041765213013, -1.0711873769760132},
  G1 = {{0.1227012425661087, -0.5663174986839294, 0.3731146454811096, -0.8919953107833862},
        {-1.5091077089309692, 0.3703935444355011, 1.4565025568008423, 0.9398099184036255},
        {0.7748488187789917, 0.19186942279338837, 1.2637947797775269, -1.2904350757598877}},
  G2 = {-0.7911027073860168, -0.02087947353720665, -0.7184800505638123},
  cn_default_ret = 3.42519760592057,
  cn_default_gw = {{0.035823103032336726, -0.16533858728805703, 0.1089322659527446,
        -0.26042148599545223}, {-0.4405898409284723, 0.10813782996269573, 0.4252315630057857,
        0.2743811458930097}, {0.22622011390511476, 0.056017021162432935, 0.3689697810786841,
        -0.37674751867799067}},
  cn_default_gb = {-0.23096549964097537, -0.006095843172747934, -0.20976303368858537},
  cn_inf_ret = 1.5091077089309692,
  cn_inf_gw = {{0.0813070932796011, -0.37526620536508637, 0.24724172836125147,
        -0.5910742582721312}, {-0.9999993373572135, 0.24543861038207282, 0.9651409127660575,
        0.6227582631004582}, {0.5134479803829927, 0.12714088896174078, 0.8374444944213335,
        -0.855097494383962}},
  cn_inf_gb = {-0.5242185024208246, -0.013835632525106403, -0.47609562274196476},
  cn_1_ret = 11.281352754682302,
  cn_1_gw = {{0.010876464406160637, -0.050199427391316456, 0.03307357021104397,
        -0.07906810921633989}, {-0.133770090163569, 0.032832366796561985, 0.12910707247313508,
        0.08330648420749677}, {0.06868402814311114, 0.01700765944989123, 0.11202509975835051,
        -0.11438654471980328}},
  cn_1_gb = {-0.07012480280193956, -0.001850795036769472, -0.0636873965826671},
  cv_gw = {{0.1227012425661087, -0.5, 0.3731146454811096, -0.5}, {-0.5, 0.3703935444355011, 0.5,
        0.5}, {0.5, 0.19186942279338837, 0.5, -0.5}},
  cv_gb = {-0.5, -0.02087947353720665, -0.5},
  p2v = {1.5409960746765137, -0.293428897857666, -2.1787893772125244, 0.5684312582015991,
        -1.0845223665237427, -1.3985954523086548, 0.40334683656692505, 0.8380263447761536,
        -0.7192575931549072, -0.40334352850914, -0.5966353416442871, 0.18203648924827576,
        -0.8566746115684509, 1.1006041765213013, -1.0711873769760132},
  v2p_w = {{0.0, 1.0, 2.0, 3.0}, {4.0, 5.0, 6.0, 7.0}, {8.0, 9.0, 10.0, 11.0}},
  v2p_b = {12.0, 13.0, 14.0},
  pad_default = {{1.0, 4.0, 6.0}, {2.0, 5.0, 0.0}, {3.0, 0.0, 0.0}},
  pad_bf = {{1.0, 2.0, 3.0}, {4.0, 5.0, -1.0}, {6.0, -1.0, -1.0}},
  pk_data = {1.0, 4.0, 6.0, 2.0, 5.0, 3.0},
  pk_bs = {3, 2, 1},
  pk_sorted_nil = true,
  pk2_data = {1.0, 4.0, 6.0, 2.0, 5.0, 3.0},
  pk2_bs = {3, 2, 1},
  pk2_sorted = {2, 1, 3},
  pk2_unsorted = {2, 1, 3},
  pd = {{4.0, 5.0, 0.0, 0.0}, {1.0, 2.0, 3.0, 0.0}, {6.0, 0.0, 0.0, 0.0}},
  pd_len = {2, 3, 1},
  pd2 = {{4.0, 1.0, 6.0}, {5.0, 2.0, 9.0}, {9.0, 3.0, 9.0}},
  ps_data = {1.0, 4.0, 6.0, 2.0, 5.0, 3.0},
  ps_sorted = {2, 1, 3},
  us = {{4.0, 5.0}, {1.0, 2.0, 3.0}, {6.0}},
  ups = {{4.0, 5.0}, {1.0, 2.0, 3.0}, {6.0}},
  invp = {2, 3, 1},
  wn_g = {{2.744267965381876}, {1.9993085874412024}, {1.0339867028245704}},
  wn_v = {{1.5409960746765137, -0.293428897857666, -2.1787893772125244, 0.5684312582015991},
        {-1.0845223665237427, -1.3985954523086548, 0.40334683656692505, 0.8380263447761536},
        {-0.7192575931549072, -0.40334352850914, -0.5966353416442871, 0.18203648924827576}},
  wn_names = {"bias", "weight_g", "weight_v"},
  wn_out = {{-1.2248888462781906, 1.3408763334155083, -1.202500469982624}, {-1.4062843173742294,
        0.7200040146708488, -1.9711004570126534}},
  wn_none_g = 3.549277390576192,
  wn_d1_g = {{2.0169752479814105, 1.4848756713296298, 2.2947299518073323, 1.028853504274234}},
  rwn_names = {"bias", "weight"},
  rwn_w = {{1.5409960746765137, -0.293428897857666, -2.1787893772125244, 0.5684312582015991},
        {-1.0845223665237427, -1.3985954523086548, 0.40334683656692505, 0.8380263447761536},
        {-0.7192575931549072, -0.40334352850914, -0.5966353416442871, 0.18203648924827576}},
  sn_names = {"bias", "weight_orig"},
  sn_buffers = {"weight_u", "weight_v"},
  sn_out = {{-1.0008558194120183, 1.1946872578543586, -1.1226054878762952}, {-1.071884627248838,
        0.951573025989293, -1.4235652662669824}},
  sn_u = {0.9750787680908176, 0.001381446837434591, 0.22185465427420917},
  sn_v = {0.17931406732706293, -0.2561049432559034, -0.9164042059304875, 0.24992009653372968},
  sn_w = {{0.6034059913631544, -0.11489760286610111, -0.853145952629642, 0.22257994845894902},
        {-0.424665126979734, -0.5476463498412606, 0.15793803876687257, 0.3281449743239911},
        {-0.2816388361886123, -0.15793674343463904, -0.23362378770675293, 0.07127981054862978}},
  sn_eval_out = {{-1.0008558194120183, 1.1946872578543586, -1.1226054878762952},
        {-1.071884627248838, 0.951573025989293, -1.4235652662669824}},
  sn_eval_u = {0.9750787680908176, 0.001381446837434591, 0.22185465427420917},
  sn3_u = {0.9600965460575696, -0.2775774041222574, 0.03413805748829731},
  sn3_w = {{0.5418577354439862, -0.10317788651107127, -0.7661238710122101, 0.19987648209250086},
        {-0.38134868947428635, -0.49178565542375646, 0.14182813769108987, 0.2946737275227198},
        {-0.25291128058818924, -0.14182697448455772, -0.20979383427507295, 0.06400917007718553}},
  rsn_names = {"bias", "weight"},
  rsn_buffers = {},
  psn_names = {"bias", "parametrizations.weight.original"},
  psn_buffers = {"parametrizations.weight.0._u", "parametrizations.weight.0._v"},
  psn_sd = {"bias", "parametrizations.weight.0._u", "parametrizations.weight.0._v",
        "parametrizations.weight.original"},
  po_names = {"bias", "parametrizations.weight.original"},
  po_sd = {"bias", "parametrizations.weight.0.base", "parametrizations.weight.original"},
  po_orth = true,
  pz_w = {{0.0, 1.0, 2.0}, {1.0, 4.0, 5.0}, {2.0, 5.0, 8.0}},
  pz_names = {"bias", "parametrizations.weight.original"},
  pz_is = true,
  pz_is_w = true,
  pz_is_b = false,
  pz_orig = {{0.0, 1.0, 2.0}, {3.0, 4.0, 5.0}, {6.0, 7.0, 8.0}},
  pz_type = "ParametrizedLinear",
  pz_type_before = "Linear",
  pz_cached_same = true,
  pz_left = {{0.0, 1.0, 2.0}, {1.0, 4.0, 5.0}, {2.0, 5.0, 8.0}},
  pz_left_is = false,
  pz_unleft = {{0.0, 1.0, 2.0}, {3.0, 4.0, 5.0}, {6.0, 7.0, 8.0}},
  pr_l1_mask = {{1.0, 0.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0}, {1.0, 0.0, 1.0, 0.0}},
  pr_l1_w = {{1.5409960746765137, -0.0, -2.1787893772125244, 0.5684312582015991},
        {-1.0845223665237427, -1.3985954523086548, 0.40334683656692505, 0.8380263447761536},
        {-0.7192575931549072, -0.0, -0.5966353416442871, 0.0}},
  pr_names = {"bias", "weight_orig"},
  pr_buffers = {"weight_mask"},
  pr_is = true,
  pr_l1n_mask = {{1.0, 0.0, 1.0, 0.0}, {1.0, 1.0, 0.0, 1.0}, {1.0, 0.0, 1.0, 0.0}},
  pr_ln_mask = {{1.0, 1.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0}, {0.0, 0.0, 0.0, 0.0}},
  pr_ln1_mask = {{1.0, 0.0, 1.0, 0.0}, {1.0, 0.0, 1.0, 0.0}, {1.0, 0.0, 1.0, 0.0}},
  pr_rand_sum = 6.0,
  pr_rs_sum = 8.0,
  pr_g_m1 = {{1.0, 0.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 0.0}},
  pr_g_m2 = {{0.0, 1.0, 0.0}, {1.0, 0.0, 0.0}},
  pr_cm_b = {-0.8566746115684509, 0.0, -1.0711873769760132},
  pr_rm_names = {"bias", "weight"},
  pr_rm_buffers = {},
  pr_rm_b = {-0.8566746115684509, 0.0, -1.0711873769760132},
  pr_rm_is = false,
  fc_out = {{-0.10667461156845093, 1.8506041765213013, -0.3211873769760132}, {1.893325388431549,
        3.8506041765213013, 1.6788126230239868}},
  fc_w_kept = {{1.5409960746765137, -0.293428897857666, -2.1787893772125244, 0.5684312582015991},
        {-1.0845223665237427, -1.3985954523086548, 0.40334683656692505, 0.8380263447761536},
        {-0.7192575931549072, -0.40334352850914, -0.5966353416442871, 0.18203648924827576}},
  cw = {{{{-1.5255959033966064, -0.7502318024635315}, {-0.6539809107780457,
        -1.6094847917556763}}, {{-0.1001671776175499, -0.6091889142990112}, {-0.9797722697257996,
        -1.6090962886810303}}}, {{{0.43914157152175903, 1.1712007522583008}, {1.7674273252487183,
        -0.09536188095808029}}, {{0.13937149941921234, -1.5785011053085327},
        {-0.3206208348274231, -0.29934605956077576}}}, {{{-0.7984398007392883,
        0.33573052287101746}, {0.2753335237503052, 1.7163026332855225}}, {{-0.056139666587114334,
        0.9107019901275635}, {-1.3923858404159546, 2.6890869140625}}}},
  cb = {3.586989402770996, -1.8312901258468628, 1.5987002849578857},
  rm = {-1.277006983757019, 0.32550153136253357, -0.4791449308395386},
  rv = {1.2713170051574707, 0.8784613609313965, 1.4980247616767883},
  bw = {0.24239781498908997, 0.8616272807121277, 0.07269138842821121},
  bb = {1.3484106063842773, -0.8736774325370789, -0.2692604064941406},
  fu_w = {{{{-0.32797412224880645, -0.16128557788356213}, {-0.1405934656106272,
        -0.34600863877099813}}, {{-0.021534039311532995, -0.13096403772852844},
        {-0.21063241547227843, -0.3459251179942221}}}, {{{0.4037013381650246,
        1.0766808282534281}, {1.624789868651695, -0.08766584957854137}}, {{0.12812374064843945,
        -1.451110643658227}, {-0.2947456320632233, -0.275187804243499}}},
        {{{-0.04742028896143606, 0.019939434874084026}, {0.016352385295573646,
        0.1019332537535266}}, {{-0.0033342015381681903, 0.054087673847943905},
        {-0.08269545034854323, 0.15970806864736678}}}},
  fu_b = {2.394077379571839, -2.8564085940195945, -0.14585470895874855},
  fuw_b_nobias = {1.62294283583693, -1.172909872158907, -0.24080341943790884},
  fuw_isparam = true,
  ful_w = {{0.3312848663631316, -0.06308163584015872, -0.46839830387938025, 0.12220191634782337},
        {-0.9969976860044109, -1.2857239948656187, 0.37079536128277707, 0.7703947399726296},
        {-0.04271756352017036, -0.023955051658144988, -0.03543488222804102, 0.010811363503780586}},
  ful_b = {1.4387740771528965, -0.16112823346782068, -0.3044225111978793},
  si_shape = {3, 4},
  si_type = "Linear",
  cm_same = true,
  cm_cl = true,
}

local TOL = 1e-6
local function close(want, got, what)
    P.close(want, got, TOL, what or "value")
end
local function t64(v)
    return tide.tensor(v, { dtype = "float64" })
end
local function lin()
    local m = nn.Linear(4, 3):to("float64")
    tide.no_grad(function()
        m.weight:copy_(t64(R.W))
        m.bias:copy_(t64(R.B))
    end)
    return m
end
local function with_grads(m)
    m.weight.grad = t64(R.G1)
    m.bias.grad = t64(R.G2)
    return m
end
-- the sorted names of a named_parameters / named_buffers / state_dict listing
local function names(listing)
    local out = {}
    for k in pairs(listing) do
        if type(k) == "string" then
            out[#out + 1] = k
        end
    end
    table.sort(out)
    return out
end
local X = t64({ { 0, 1 / 8, 2 / 8, 3 / 8 }, { 4 / 8, 5 / 8, 6 / 8, 7 / 8 } })

describe("nn.utils namespace: PyTorch 1.13's public callables", function()
    it("has every public callable of torch.nn.utils and its submodules", function()
        local want = {
            utils = { "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_",
                "convert_conv2d_weight_memory_format", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
                "parameters_to_vector", "remove_spectral_norm", "remove_weight_norm", "skip_init",
                "spectral_norm", "vector_to_parameters", "weight_norm" },
            rnn = { "PackedSequence", "invert_permutation", "pack_padded_sequence",
                "pack_sequence", "pad_packed_sequence", "pad_sequence", "unpack_sequence",
                "unpad_sequence" },
            parametrize = { "ParametrizationList", "cached", "is_parametrized",
                "register_parametrization", "remove_parametrizations",
                "type_before_parametrizations" },
            parametrizations = { "orthogonal", "spectral_norm" },
            prune = { "BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured",
                "LnStructured", "PruningContainer", "RandomStructured", "RandomUnstructured",
                "custom_from_mask", "global_unstructured", "identity", "is_pruned",
                "l1_unstructured", "ln_structured", "random_structured", "random_unstructured",
                "remove" },
            stateless = { "functional_call" },
            fusion = { "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
                "fuse_linear_bn_weights" },
        }
        local missing = {}
        for _, mod in ipairs({ "utils", "rnn", "parametrize", "parametrizations", "prune",
            "stateless", "fusion" }) do
            local m = mod == "utils" and U or U[mod]
            for _, n in ipairs(want[mod]) do
                if m[n] == nil then
                    missing[#missing + 1] = mod .. "." .. n
                end
            end
        end
        assert.are.same({}, missing)
    end)
    pending("parametrize.transfer_parametrizations_and_params (PyTorch 1.13): not in tide yet")
end)

describe("nn.utils: gradient clipping and parameter vectors", function()
    it("clip_grad_norm_ returns the total norm and scales the gradients (2, inf, 1)", function()
        for _, c in ipairs({ { "cn_default" }, { "cn_inf", { norm_type = math.huge } },
            { "cn_1", { norm_type = 1 } } }) do
            local m = with_grads(lin())
            local total = c[2] and U.clip_grad_norm_(m:parameters(), 1.0, c[2])
                or U.clip_grad_norm_(m:parameters(), 1.0)
            assert.is_number(total)
            close(R[c[1] .. "_ret"], t64({ total }):view(-1)[1], c[1])
            close(R[c[1] .. "_gw"], m.weight.grad, c[1] .. " weight.grad")
            close(R[c[1] .. "_gb"], m.bias.grad, c[1] .. " bias.grad")
        end
        local m = with_grads(lin())
        assert.are.equal(R.cn_inf_ret, (U.clip_grad_norm_(m, 1.0, "inf")))
    end)
    it("clip_grad_norm_ raises on a non-finite total with error_if_nonfinite", function()
        local m = with_grads(lin())
        m.bias.grad = t64({ 0 / 0, 1, 2 })
        local ok, err = pcall(U.clip_grad_norm_, m:parameters(), 1.0,
            { error_if_nonfinite = true })
        assert.is_false(ok)
        assert.matches("tide: clip_grad_norm_: the total norm of order 2", tostring(err))
        close(R.G1, m.weight.grad, "untouched weight.grad")
    end)
    it("clip_grad_value_ clamps in place", function()
        local m = with_grads(lin())
        assert.is_nil(U.clip_grad_value_(m:parameters(), 0.5))
        close(R.cv_gw, m.weight.grad)
        close(R.cv_gb, m.bias.grad)
    end)
    it("parameters_to_vector and vector_to_parameters", function()
        local m = lin()
        close(R.p2v, U.parameters_to_vector(m:parameters()))
        U.vector_to_parameters(tide.arange(15):to("float64"), m:parameters())
        close(R.v2p_w, m.weight)
        close(R.v2p_b, m.bias)
    end)
end)

describe("nn.utils.rnn", function()
    local rnn = U.rnn
    local a, b, c = t64({ 1, 2, 3 }), t64({ 4, 5 }), t64({ 6 })
    it("pad_sequence (default, batch_first and padding_value)", function()
        close(R.pad_default, rnn.pad_sequence({ a, b, c }))
        close(R.pad_bf, rnn.pad_sequence({ a, b, c }, { batch_first = true, padding_value = -1 }))
    end)
    it("pack_padded_sequence, enforce_sorted true: no sorted_indices", function()
        local pk = rnn.pack_padded_sequence(rnn.pad_sequence({ a, b, c }),
            tide.tensor({ 3, 2, 1 }, { dtype = "int64" }))
        close(R.pk_data, pk.data)
        close(R.pk_bs, pk.batch_sizes)
        assert.are.equal("int64", pk.batch_sizes.dtype)
        assert.are.equal(R.pk_sorted_nil, pk.sorted_indices == nil)
        assert.is_nil(pk.unsorted_indices)
    end)
    it("pack_padded_sequence, enforce_sorted false; pad_packed_sequence", function()
        local pk = rnn.pack_padded_sequence(rnn.pad_sequence({ b, a, c }, { batch_first = true }),
            { 2, 3, 1 }, { batch_first = true, enforce_sorted = false })
        close(R.pk2_data, pk.data)
        close(R.pk2_bs, pk.batch_sizes)
        close(R.pk2_sorted, pk.sorted_indices)
        close(R.pk2_unsorted, pk.unsorted_indices)
        local pd, len = rnn.pad_packed_sequence(pk, { batch_first = true, total_length = 4 })
        close(R.pd, pd)
        close(R.pd_len, len)
        close(R.pd2, (rnn.pad_packed_sequence(pk, { padding_value = 9 })))
        local ups = rnn.unpad_sequence(pd, len, { batch_first = true })
        for i = 1, 3 do
            close(R.ups[i], ups[i])
        end
    end)
    it("pack_sequence and unpack_sequence", function()
        local ps = rnn.pack_sequence({ b, a, c }, { enforce_sorted = false })
        close(R.ps_data, ps.data)
        close(R.ps_sorted, ps.sorted_indices)
        local us = rnn.unpack_sequence(ps)
        for i = 1, 3 do
            close(R.us[i], us[i])
        end
    end)
    it("invert_permutation (1-based)", function()
        close(R.invp, rnn.invert_permutation(tide.tensor({ 3, 1, 2 }, { dtype = "int64" })))
        assert.is_nil(rnn.invert_permutation(nil))
        local ok, err = pcall(rnn.invert_permutation, t64({ 1, 2 }))
        assert.is_false(ok)
        assert.matches("tide: invert_permutation: expected a 1%-d integer tensor", tostring(err))
    end)
end)

describe("nn.utils: weight_norm and spectral_norm", function()
    it("weight_norm: weight_g, weight_v and the forward; dim", function()
        local m = U.weight_norm(lin())
        close(R.wn_g, m.weight_g)
        close(R.wn_v, m.weight_v)
        assert.are.same(R.wn_names, names(m:named_parameters()))
        close(R.wn_out, m(X))
        close(R.wn_none_g, U.weight_norm(lin(), { dim = false }).weight_g)
        close(R.wn_d1_g, U.weight_norm(lin(), { dim = 2 }).weight_g)
    end)
    it("remove_weight_norm", function()
        local m = U.remove_weight_norm(U.weight_norm(lin()))
        assert.are.same(R.rwn_names, names(m:named_parameters()))
        close(R.rwn_w, m.weight)
    end)
    it("spectral_norm: weight_orig, weight_u, weight_v; training and eval", function()
        local m = U.spectral_norm(lin())
        assert.are.same(R.sn_names, names(m:named_parameters()))
        assert.are.same(R.sn_buffers, names(m:named_buffers()))
        local u0, v0 = t64({ 0.6, 0, 0.8 }), t64({ 0.5, 0.5, 0.5, 0.5 })
        tide.no_grad(function()
            m.weight_u:copy_(u0)
            m.weight_v:copy_(v0)
        end)
        close(R.sn_out, m(X))
        close(R.sn_u, m.weight_u)
        close(R.sn_v, m.weight_v)
        close(R.sn_w, m.weight)
        m:eval()
        close(R.sn_eval_out, m(X))
        close(R.sn_eval_u, m.weight_u)
        local m3 = U.spectral_norm(lin(), { n_power_iterations = 3 })
        tide.no_grad(function()
            m3.weight_u:copy_(u0)
            m3.weight_v:copy_(v0)
        end)
        m3(X)
        close(R.sn3_u, m3.weight_u)
        close(R.sn3_w, m3.weight)
        U.remove_spectral_norm(m3)
        assert.are.same(R.rsn_names, names(m3:named_parameters()))
        assert.are.same(R.rsn_buffers, names(m3:named_buffers()))
    end)
end)

describe("nn.utils.parametrizations and parametrize", function()
    local PZ = U.parametrize
    it("parametrizations.spectral_norm and orthogonal: PyTorch's names", function()
        local m = U.parametrizations.spectral_norm(lin())
        assert.are.same(R.psn_names, names(m:named_parameters()))
        -- tide's lists count from 1 (docs/API.md): parametrizations.weight.1._u is PyTorch's
        -- parametrizations.weight.0._u, and state_dict_to_torch gives PyTorch's keys
        assert.are.same({ "parametrizations.weight.1._u", "parametrizations.weight.1._v" },
            names(m:named_buffers()))
        assert.are.same(R.psn_sd, names(U.state_dict_to_torch(m:state_dict())))
        local o = U.parametrizations.orthogonal(nn.Linear(3, 3):to("float64"))
        assert.are.same(R.po_names, names(o:named_parameters()))
        assert.are.same(R.po_sd, names(U.state_dict_to_torch(o:state_dict())))
        local w = o.weight
        local err = w:matmul(w:t()):sub(tide.eye(3):to("float64")):abs():max():item()
        assert.are.equal(R.po_orth, err < 1e-6)
    end)
    local Sym = nn.Module:extend("Sym")
    function Sym:forward(X)
        return X:triu():add(X:triu(1):t())
    end
    local function sq()
        local m = nn.Linear(3, 3):to("float64")
        tide.no_grad(function()
            m.weight:copy_(tide.arange(9):to("float64"):view(3, 3))
        end)
        return m
    end
    it("register_parametrization, is_parametrized, cached, type_before", function()
        local m = sq()
        PZ.register_parametrization(m, "weight", Sym())
        close(R.pz_w, m.weight)
        assert.are.same(R.pz_names, names(m:named_parameters()))
        assert.are.equal(R.pz_is, PZ.is_parametrized(m))
        assert.are.equal(R.pz_is_w, PZ.is_parametrized(m, "weight"))
        assert.are.equal(R.pz_is_b, PZ.is_parametrized(m, "bias"))
        close(R.pz_orig, m.parametrizations.weight.original)
        assert.are.equal(R.pz_type, m.__name)
        assert.are.equal(R.pz_type_before, PZ.type_before_parametrizations(m).__name)
        local same = PZ.cached(function()
            return rawequal(m.weight, m.weight)
        end)
        assert.are.equal(R.pz_cached_same, same)
        PZ.remove_parametrizations(m, "weight", { leave_parametrized = true })
        close(R.pz_left, m.weight)
        assert.are.equal(R.pz_left_is, PZ.is_parametrized(m))
        local m2 = sq()
        PZ.register_parametrization(m2, "weight", Sym())
        PZ.remove_parametrizations(m2, "weight", { leave_parametrized = false })
        close(R.pz_unleft, m2.weight)
    end)
end)

describe("nn.utils.prune", function()
    local prune = U.prune
    it("l1_unstructured: weight_orig, the weight_mask buffer, is_pruned", function()
        local m = lin()
        prune.l1_unstructured(m, "weight", 0.25)
        close(R.pr_l1_mask, m.weight_mask)
        close(R.pr_l1_w, m.weight)
        assert.are.same(R.pr_names, names(m:named_parameters()))
        assert.are.same(R.pr_buffers, names(m:named_buffers()))
        assert.are.equal(R.pr_is, prune.is_pruned(m))
        local m5 = lin()
        prune.l1_unstructured(m5, "weight", { amount = 5 })
        close(R.pr_l1n_mask, m5.weight_mask)
    end)
    it("ln_structured (dims 1-based), random_unstructured and random_structured", function()
        local m = lin()
        prune.ln_structured(m, "weight", 1, 2, 1)
        close(R.pr_ln_mask, m.weight_mask)
        m = lin()
        prune.ln_structured(m, "weight", { amount = 0.5, n = 1, dim = 2 })
        close(R.pr_ln1_mask, m.weight_mask)
        m = lin()
        prune.random_unstructured(m, "weight", 0.5)
        close(R.pr_rand_sum, m.weight_mask:sum())
        m = lin()
        prune.random_structured(m, "weight", 1, 1)
        close(R.pr_rs_sum, m.weight_mask:sum())
    end)
    it("global_unstructured, custom_from_mask and remove", function()
        local m1, m2 = lin(), nn.Linear(3, 2):to("float64")
        tide.no_grad(function()
            m2.weight:copy_(t64({ { 0.05, -2.0, 0.3 }, { 1.5, -0.01, 0.2 } }))
        end)
        prune.global_unstructured({ { m1, "weight" }, { m2, "weight" } },
            { pruning_method = prune.L1Unstructured, amount = 6 })
        close(R.pr_g_m1, m1.weight_mask)
        close(R.pr_g_m2, m2.weight_mask)
        local m = lin()
        prune.custom_from_mask(m, "bias", t64({ 1, 0, 1 }))
        close(R.pr_cm_b, m.bias)
        prune.remove(m, "bias")
        assert.are.same(R.pr_rm_names, names(m:named_parameters()))
        assert.are.same(R.pr_rm_buffers, names(m:named_buffers()))
        close(R.pr_rm_b, m.bias)
        assert.are.equal(R.pr_rm_is, prune.is_pruned(m))
    end)
end)

describe("nn.utils.stateless, fusion, skip_init, memory format", function()
    it("stateless.functional_call", function()
        local m = lin()
        close(R.fc_out, U.stateless.functional_call(m, { weight = tide.ones(3, 4):to("float64") },
            X))
        close(R.fc_w_kept, m.weight)
    end)
    local function conv_bn(bn)
        tide.no_grad(function()
            bn.running_mean:copy_(t64(R.rm))
            bn.running_var:copy_(t64(R.rv))
            bn.weight:copy_(t64(R.bw))
            bn.bias:copy_(t64(R.bb))
        end)
        return bn:eval()
    end
    it("fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval", function()
        local conv = nn.Conv2d(2, 3, 2):to("float64")
        tide.no_grad(function()
            conv.weight:copy_(t64(R.cw))
            conv.bias:copy_(t64(R.cb))
        end)
        conv:eval()
        local f = U.fuse_conv_bn_eval(conv, conv_bn(nn.BatchNorm2d(3):to("float64")))
        close(R.fu_w, f.weight)
        close(R.fu_b, f.bias)
        local fw, fb = U.fuse_conv_bn_weights(t64(R.cw), nil, t64(R.rm), t64(R.rv), 1e-5,
            t64(R.bw), t64(R.bb))
        close(R.fuw_b_nobias, fb)
        assert.are.equal(R.fuw_isparam, fw.requires_grad == true)
        local l = lin():eval()
        local fl = U.fusion.fuse_linear_bn_eval(l, conv_bn(nn.BatchNorm1d(3):to("float64")))
        close(R.ful_w, fl.weight)
        close(R.ful_b, fl.bias)
    end)
    it("skip_init and convert_conv2d_weight_memory_format", function()
        local m = U.skip_init(nn.Linear, 4, 3)
        assert.are.same(R.si_shape, m.weight.shape)
        assert.are.equal(R.si_type, m.__name)
        local c = nn.Conv2d(2, 3, 2)
        assert.are.equal(R.cm_same, rawequal(c, U.convert_conv2d_weight_memory_format(c,
            "channels_last")))
    end)
    pending("convert_conv2d_weight_memory_format: tide keeps one (contiguous) memory format, " ..
        "so the weight is not channels_last as PyTorch's (documented in docs/API.md)")
end)

describe("nn.utils.state_dict_to_torch of a named listing", function()
    it("takes named_buffers() / named_parameters() on every host (their list entries skipped)",
        function()
            local m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
            local keys = {}
            for k in pairs(U.state_dict_to_torch(m:named_buffers())) do
                keys[#keys + 1] = k
            end
            table.sort(keys)
            assert.are.same({ "1.num_batches_tracked", "1.running_mean", "1.running_var" }, keys)
            local sd = U.state_dict_from_torch(m:named_parameters())
            assert.is_not_nil(sd["2.weight"])
            assert.has_error(function() U.state_dict_to_torch({ [1] = 2 }) end,
                "tide: state_dict_to_torch: state_dict keys are strings, got a number key")
        end)
end)
