-- nn.MultiheadAttention, F.multi_head_attention_forward and the Transformer layers' attributes
-- and values against PyTorch 1.13 (float64, dropout 0). Every parameter is set in both from one
-- formula (sorted by name, the i-th filled with sin(k * 0.37 + i * 1.3) / 2; the values PyTorch's
-- state_dict then holds), every input is cos(k * 0.53 + s); E holds what PyTorch printed for the
-- same cases (0/0: PyTorch's NaN). L = 2 queries, S = 3 keys, N = 2, E = 4, 2 heads.
local E = {
  default = {out = {0.143587958,-1.07866856,-1.09982802,0.0397706936,0.178702754,-0.951820384,
        -1.11193976,-0.0892738619,0.0633030019,-1.21896279,-1.04498448,0.190010431,0.152012809,
        -1.05553744,-1.1040582,0.0158724656}, w = {0.467822091,0.280078146,0.252099763,
        0.0680073582,0.519096531,0.412896111,0.162478842,0.744128428,0.0933927294,0.240293167,
        0.500119741,0.259587091}, gq = {-0.0968586905,-0.0969701378,-0.0839571319,-0.0595809221,
        0.0469109654,0.0503482872,0.0469712044,0.0372367895,0.0318281609,0.0251704851,0.0151061023,
        0.0029971793,-0.0904841944,-0.0893961537,-0.0762087631,-0.0527068738}, gk = {0.00147674159,
        -0.0145588943,-0.0286240521,-0.0388150788,-0.0208960877,-0.0156580646,-0.00830079593,
        0.000179946546,0.0203056557,0.0389215505,0.052269596,0.058543197,0.0299568255,0.0152329654,
        -0.00155260511,-0.0181280378,-0.0217823973,-0.0243626562,-0.0236455439,-0.0197281182,
        -0.00906073774,0.000425099248,0.00985340105,0.0179480912}, gv = {-0.109260157,
        -0.0612717439,-0.00499048749,0.051966208,-0.0215931122,-0.00190337853,0.0180439685,
        0.0355491491,-0.0124252112,-0.0196542565,-0.0242231904,-0.0255136291,-0.0279726218,
        0.0071658992,0.0413345494,0.0699087623,-0.0361986321,-0.0269118109,-0.0139826022,
        0.000839086026,-0.0473537386,-0.0185169861,0.0128259536,0.0424329606}},
  batch_first = {out = {0.14487959,-1.07382404,-1.10024114,0.0348512644,0.170303827,-0.948790101,
        -1.10299131,-0.0906814037,0.0701927259,-1.20704452,-1.04971291,0.177234692,0.150547866,
        -1.05965486,-1.10333993,0.0201201393}, w = {0.465494611,0.255734616,0.278770773,
        0.744030595,0.166756417,0.0892129879,0.0696175233,0.430805692,0.499576784,0.503360451,
        0.23540286,0.261236689}},
  unbatched = {out = {0.14487959,-1.07382404,-1.10024114,0.0348512644,0.170303827,-0.948790101,
        -1.10299131,-0.0906814037}, w = {0.465494611,0.255734616,0.278770773,0.744030595,
        0.166756417,0.0892129879}, gq = {-0.0955571695,-0.0952552606,-0.0820609991,-0.0577601663,
        0.0478408214,0.0517171914,0.0485938821,0.0388936188}, gk = {0.0329262601,0.0192632512,
        0.00299305167,-0.0136822434,-0.0211745728,-0.0156823979,-0.00806768409,0.00063895293,
        -0.0117516874,-0.00358085332,0.00507463243,0.0130432905}, gv = {-0.019929054,0.00947182935,
        0.0375907451,0.0606219298,-0.0262041304,-0.00463270798,0.0175657297,0.0373867283,
        -0.053356589,-0.022081277,0.0121826324,0.0447976795}},
  kvdim = {out = {0.0929086126,-1.34704235,-1.09781645,0.30850927,0.180414295,-0.94114635,
        -1.11171564,-0.0999072527,0.068829418,-1.44015666,-1.09062291,0.402928084,0.171004279,
        -0.920777051,-1.09861179,-0.117900257}, w = {0.410627747,0.167209606,0.422162646,
        0.371738204,0.255847812,0.372413984,0.362655836,0.277537902,0.359806262,0.404690075,
        0.205140396,0.390169529}, gq = {-0.0140576193,-0.0192243014,-0.0217890645,-0.0214047799,
        -0.0115788944,-0.0140128079,-0.0145501536,-0.0131182043,0.00261692147,0.0053390579,
        0.00733857789,0.00834485579,0.00633039652,0.0102211144,0.0127284524,0.0135130541},
        gk = {-0.0272742398,0.0170560178,0.0590778233,-0.0154231003,-0.00837169224,-0.000187214894,
        0.0149178174,0.00994707111,0.00363003542,0.00391778525,0.00282381449,0.00134765369,
        0.0123564224,-0.0270030889,-0.0627078587,0.0115053151,0.00554787775,-0.00116043879},
        gv = {0.025190335,0.0406406246,0.0505903964,0.0536929953,0.0495284992,-0.0294811161,
        -0.0155753041,0.000438552277,0.0163930526,0.0301288302,-0.0410999053,-0.0277447962,
        -0.0106345591,0.00791501566,0.0253933302,-0.0374211462,-0.0179171207,0.00401190303,
        0.0253979345,0.0433464746,0.0273641426,0.043726438,0.054170565,0.0572829603,0.0526423756,
        -0.0299270842,-0.016206278,-0.000292028006,0.0156617466,0.0294957772}},
  nobias = {out = {-0.0920005594,-0.017584454,0.0888117374,0.033689863,-0.36810063,-0.0285083726,
        0.362930829,0.0943234282,0.19653597,-0.00956608427,-0.198270715,-0.0263889714,-0.132918671,
        -0.0163266934,0.129957936,0.0398936876}, w = {0.399151161,0.325248984,0.275599855,
        0.0505757257,0.575547148,0.373877126,0.166264788,0.742201949,0.0915332638,0.263696495,
        0.436944665,0.29935884}},
  bias_kv = {out = {0.643474923,0.105939107,-0.15822921,0.553303301,0.713638339,0.238465969,
        -0.204359774,0.412410972,0.64379476,-0.143677741,-0.203815378,0.794653405,0.660677101,
        0.128844058,-0.17127773,0.528032089}, w = {0.364468564,0.251034727,0.214618554,0.169878155,
        0.05956534,0.427693951,0.341172323,0.171568385,0.146297081,0.644331175,0.0848781734,
        0.124493571,0.206886415,0.39451595,0.235547536,0.163050098}},
  zero_attn = {out = {0.0381511589,-0.931748,-0.967748174,-0.0831980743,0.0999348722,-0.866604545,
        -1.01771856,-0.157403322,-0.0259052634,-1.03456374,-0.922336692,0.0278527297,0.0493335942,
        -0.919602115,-0.976728035,-0.0969723968}, w = {0.362037764,0.215493638,0.193012071,
        0.229456527,0.0532180612,0.402900153,0.317365104,0.226516682,0.13368539,0.618573145,
        0.0772335156,0.17050795,0.185906537,0.390912543,0.201861641,0.22131928}},
  kpm_bool = {out = {0.0651547384,-1.00140087,-1.00738283,-0.0207326796,0.122558168,-0.876013917,
        -1.04204818,-0.152405962,-0.0856585688,-1.16995035,-0.887134835,0.169622965,0.0765411693,
        -0.97981065,-1.01485402,-0.0436777526}, w = {0.620003442,0.379996558,0,0.113769974,
        0.886230026,0,0,0.886944244,0.113055756,0,0.653798241,0.346201759}},
  kpm_float = {out = {0.130900016,-1.06531922,-1.08471927,0.0291612224,0.211916176,-0.982398057,
        -1.15069824,-0.0657247767,0.0419929471,-1.20904378,-1.02187568,0.184282051,0.206591722,
        -1.08297796,-1.16361327,0.0325130706}, w = {0.492400216,0.298803297,0.208796487,
        0.0740696607,0.572435994,0.353494345,0.251852486,0.693174818,0.0549726955,0.375297083,
        0.470551173,0.154151744}},
  am2_bool = {out = {0.23880779,-1.01589572,-1.18366443,-0.0382053069,0.120694944,-1.2504991,
        -1.10809532,0.210102017,-0.0856585688,-1.16995035,-0.887134835,0.169622965,0.243370548,
        -0.999750791,-1.18529941,-0.0546467314}, w = {0.647208571,0,0.352791429,0.113769974,
        0.886230026,0,0.619923079,0,0.380076921,0.32655954,0.67344046,0}},
  am3_bool = {out = {0.143587958,-1.07866856,-1.09982802,0.0397706936,-0.0856614113,-0.997647961,
        -0.855886117,0.00298731513,0.106013711,-1.09062813,-1.06442256,0.0581508064,0.170014455,
        -1.00362124,-1.1126452,-0.0376009299}, w = {0.467822091,0.280078146,0.252099763,
        0.047205746,0.307172226,0.645622028,0.392268237,0.337166224,0.270565539,0.153826571,
        0.561047629,0.2851258}},
  am2_float = {out = {0.136783209,-1.0112938,-1.08080532,-0.0241544218,0.207221032,-0.980721719,
        -1.1456991,-0.0664945547,0.0977863107,-1.24287492,-1.08380409,0.206882888,0.109218293,
        -1.06412964,-1.06282183,0.031942605}, w = {0.614392367,0.230979497,0.154628136,
        0.0456626485,0.431157542,0.523179809,0.24186368,0.694538779,0.0635975416,0.177098652,
        0.457656406,0.365244942}},
  no_weights = {out = {0.143587958,-1.07866856,-1.09982802,0.0397706936,0.178702754,-0.951820384,
        -1.11193976,-0.0892738619,0.0633030019,-1.21896279,-1.04498448,0.190010431,0.152012809,
        -1.05553744,-1.1040582,0.0158724656}, w = "nil"},
  per_head = {out = {0.143587958,-1.07866856,-1.09982802,0.0397706936,0.178702754,-0.951820384,
        -1.11193976,-0.0892738619,0.0633030019,-1.21896279,-1.04498448,0.190010431,0.152012809,
        -1.05553744,-1.1040582,0.0158724656}, w = {0.555261654,0.262217735,0.182520612,
        0.0866449108,0.561114631,0.352240458,0.380382529,0.297938557,0.321678914,0.0493698056,
        0.477078431,0.473551763,0.105066753,0.81392441,0.0810088375,0.172933193,0.582784976,
        0.244281831,0.219890932,0.674332447,0.105776621,0.307653142,0.417454506,0.274892352}},
  masked_row = {out = {0.143587958,-1.07866856,-1.09982802,0.0397706936,0.178702754,-0.951820384,
        -1.11193976,-0.0892738619,0/0,0/0,0/0,0/0,0/0,0/0,0/0,0/0}, w = {0.467822091,0.280078146,
        0.252099763,0/0,0/0,0/0,0.162478842,0.744128428,0.0933927294,0/0,0/0,0/0}},
  functional = {out = {0.0651547384,-1.00140087,-1.00738283,-0.0207326796,0.122558168,-0.876013917,
        -1.04204818,-0.152405962,-0.0856585688,-1.16995035,-0.887134835,0.169622965,0.0765411693,
        -0.97981065,-1.01485402,-0.0436777526}, w = {0.620003442,0.379996558,0,0.113769974,
        0.886230026,0,0,0.886944244,0.113055756,0,0.653798241,0.346201759}},
  enc_post = {out = {-0.05873085,-0.5642375,0.577909121,-0.325995351,0.687433168,-0.374887723,
        0.1175606,-0.874834748,0.0671395245,-0.218308845,0.616129589,-0.800974408,-0.0473133155,
        -0.582560106,0.568228996,-0.313120721,0.67181829,-0.36628043,0.139771059,-0.885640896,
        0.0178453852,-0.222096149,0.632490271,-0.760144943}},
  enc_pre_gelu = {out = {0.594695931,0.0383708638,-1.37718633,-0.765007119,-0.984207388,
        -0.768500865,-1.5033436,0.0777733917,0.529679751,0.95534701,0.0231564142,0.93105637,
        0.527578546,-0.0421104936,-1.44273092,-0.799237106,-0.983262618,-0.719617004,-1.44120977,
        0.150711096,0.598572523,0.971260202,0.0326225536,0.892992605}},
  enc_fn = {out = {-0.190913401,-0.410775271,0.603508913,-0.346580996,0.654127074,-0.153902358,
        0.0728788265,-0.997885643,-0.0463007223,0.115906077,0.519363454,-0.895069704,-0.183471455,
        -0.430309692,0.597780857,-0.331919851,0.628223891,-0.134809369,0.100860659,-1.01231534,
        -0.0943776816,0.104169287,0.539650394,-0.851873824}},
  enc_bf = {out = {-0.0169006486,-0.628443309,0.539374232,-0.278736302,0.696232483,-0.380699286,
        0.104759353,-0.867635849,0.786263438,-0.51964542,-0.0656754797,-0.688271338,-0.0509001858,
        -0.565498077,0.580431738,-0.335323671,0.675059095,-0.378158287,0.137910385,-0.876802808,
        0.0232083491,-0.223304686,0.63126484,-0.763627325}},
  dec_post = {out = {-0.454934579,-0.650028624,-0.53956154,-0.253344619,-0.500525535,-0.717678091,
        -0.513620195,-0.523400819,-0.501042798,-0.718402528,-0.511490623,-0.535424168,-0.453998406,
        -0.644266463,-0.5399646,-0.241394759}},
  dec_pre = {out = {0.72723398,0.0128319089,-3.38898983,-1.92831522,-0.671223889,-0.880565167,
        -3.42439855,-1.25035008,0.851387181,0.748122985,-2.02932685,-0.221224618,0.743064569,
        -0.131080631,-3.54069131,-1.92399932}},
  stack = {out = {0.379869993,0.799881768,0.474011495,0.45407908,-0.0055178389,0.762750168,
        0.480113752,0.346783684,0.379144235,0.748413458,0.471353332,0.354311597,0.365416985,
        0.802760692,0.474274451,0.454629584,-0.00728240298,0.761501657,0.480130276,0.345082158,
        0.423243843,0.742636717,0.470940736,0.363060074}, names = {"layers.0.linear1.bias",
        "layers.0.linear1.weight","layers.0.linear2.bias","layers.0.linear2.weight",
        "layers.0.norm1.bias","layers.0.norm1.weight","layers.0.norm2.bias",
        "layers.0.norm2.weight","layers.0.self_attn.in_proj_bias",
        "layers.0.self_attn.in_proj_weight","layers.0.self_attn.out_proj.bias",
        "layers.0.self_attn.out_proj.weight","layers.1.linear1.bias","layers.1.linear1.weight",
        "layers.1.linear2.bias","layers.1.linear2.weight","layers.1.norm1.bias",
        "layers.1.norm1.weight","layers.1.norm2.bias","layers.1.norm2.weight",
        "layers.1.self_attn.in_proj_bias","layers.1.self_attn.in_proj_weight",
        "layers.1.self_attn.out_proj.bias","layers.1.self_attn.out_proj.weight","norm.bias",
        "norm.weight"}},
  square = {out = {0,-math.huge,-math.huge,0,0,-math.huge,0,0,0}},
}

local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack

local function fill(n, i)
    local t = {}
    for k = 0, n - 1 do
        t[k + 1] = math.sin(k * 0.37 + i * 1.3) * 0.5
    end
    return t
end

local function inp(shape, s, grad)
    local n = 1
    for _, d in ipairs(shape) do
        n = n * d
    end
    local t = {}
    for k = 0, n - 1 do
        t[k + 1] = math.cos(k * 0.53 + s)
    end
    local x = tide.tensor(t, { dtype = "float64" }):view(unpack(shape))
    return grad and x:requires_grad_(true) or x
end

local function bools(rows)
    return tide.tensor(rows, { dtype = "bool" })
end

-- the parameters' names sorted (as the PyTorch side), each filled with fill(n, i)
local function setp(m)
    m:double()
    local names, byname = {}, {}
    for name, p in pairs(m:named_parameters()) do
        if type(name) == "string" then
            names[#names + 1] = name
            byname[name] = p
        end
    end
    table.sort(names)
    tide.no_grad(function()
        for i, name in ipairs(names) do
            local p = byname[name]
            p:copy_(tide.tensor(fill(p:numel(), i), { dtype = "float64" }):view(p.shape))
        end
    end)
    return names
end

local function check(want, got, what)
    assert.is_not_nil(got, what)
    local flat = got:contiguous():view(-1)
    assert.are.equal(#want, flat:numel(), what .. ": size")
    for i, w in ipairs(want) do
        local g = flat[i]:item()
        if w ~= w then
            assert.is_true(g ~= g, what .. "[" .. i .. "]: PyTorch's NaN")
        elseif w == math.huge or w == -math.huge then
            assert.are.equal(w, g, what .. "[" .. i .. "]")
        else
            assert.is_true(math.abs(g - w) <= 1e-6 * math.max(1, math.abs(w)),
                string.format("%s[%d]: %.9g, PyTorch %.9g", what, i, g, w))
        end
    end
end

local kpm_b = { { false, false, true }, { true, false, false } }
local am2b = { { false, true, false }, { false, false, true } }
local function am3b()
    local rows = {}
    for i = 0, 3 do
        rows[i + 1] = {}
        for j = 0, 1 do
            rows[i + 1][j + 1] = { i % 2 == 0 and j == 1, (i + j) % 3 == 2, false }
        end
    end
    return bools(rows)
end

describe("MultiheadAttention as PyTorch 1.13's", function()
    it("has PyTorch's attributes", function()
        local m = nn.MultiheadAttention(4, 2)
        assert.are.same({ 4, 4, 4, 2, 2, 0, false, false, true },
            { m.embed_dim, m.kdim, m.vdim, m.num_heads, m.head_dim, m.dropout, m.batch_first,
                m.add_zero_attn, m._qkv_same_embed_dim })
        assert.are.same({ 12, 4 }, m.in_proj_weight.shape)
        assert.is_nil(m.q_proj_weight)
        assert.is_nil(m.bias_k)
        local s = nn.MultiheadAttention(4, 2, { kdim = 3, vdim = 5, bias = false,
            add_bias_kv = true, add_zero_attn = true, batch_first = true, dropout = 0.25 })
        assert.are.same({ 3, 5, false, true, true, 0.25 }, { s.kdim, s.vdim,
            s._qkv_same_embed_dim, s.add_zero_attn, s.batch_first, s.dropout })
        assert.is_nil(s.in_proj_weight)
        assert.is_nil(s.in_proj_bias)
        assert.is_nil(s.out_proj.bias)
        assert.are.same({ { 4, 4 }, { 4, 3 }, { 4, 5 }, { 1, 1, 4 }, { 1, 1, 4 } },
            { s.q_proj_weight.shape, s.k_proj_weight.shape, s.v_proj_weight.shape,
                s.bias_k.shape, s.bias_v.shape })
    end)

    local function case(key, opts, call, o)
        o = o or {}
        it(key, function()
            local e = E[key]
            local kd, vd, g = o.kd or 4, o.vd or 4, e.gq ~= nil
            local m = nn.MultiheadAttention(4, 2, opts)
            setp(m)
            local q, k, v
            if o.ub then
                q, k, v = inp({ 2, 4 }, 1, g), inp({ 3, kd }, 2, g), inp({ 3, vd }, 3, g)
            else
                q = inp({ 2, 2, 4 }, 1, g)
                k = inp(o.bf and { 2, 3, kd } or { 3, 2, kd }, 2, g)
                v = inp(o.bf and { 2, 3, vd } or { 3, 2, vd }, 3, g)
            end
            local out, w = m(q, k, v, call)
            check(e.out, out, "out")
            if e.w == "nil" then
                assert.is_nil(w)
            else
                check(e.w, w, "weights")
            end
            if g then
                out:mul(inp(out.shape, 7)):sum():backward()
                check(e.gq, q.grad, "query grad")
                check(e.gk, k.grad, "key grad")
                check(e.gv, v.grad, "value grad")
            end
        end)
    end
    case("default", {}, {})
    case("batch_first", { batch_first = true }, {}, { bf = true })
    case("unbatched", {}, {}, { ub = true })
    case("kvdim", { kdim = 3, vdim = 5 }, {}, { kd = 3, vd = 5 })
    case("nobias", { bias = false }, {})
    case("bias_kv", { add_bias_kv = true }, {})
    case("zero_attn", { add_zero_attn = true }, {})
    case("kpm_bool", {}, { key_padding_mask = bools(kpm_b) })
    case("kpm_float", {}, { key_padding_mask = inp({ 2, 3 }, 6) })
    case("am2_bool", {}, { attn_mask = bools(am2b) })
    case("am3_bool", {}, { attn_mask = am3b() })
    case("am2_float", {}, { attn_mask = inp({ 2, 3 }, 8) })
    case("no_weights", {}, { need_weights = false })
    case("per_head", {}, { average_attn_weights = false })
    -- a query row with every key masked: NaN in its output and weights, as PyTorch 1.13's
    case("masked_row", {}, { attn_mask = bools({ { false, false, false }, { true, true, true } }) })

    it("F.multi_head_attention_forward with the module's weights", function()
        local m = nn.MultiheadAttention(4, 2)
        setp(m)
        local out, w = nn.functional.multi_head_attention_forward(inp({ 2, 2, 4 }, 1),
            inp({ 3, 2, 4 }, 2), inp({ 3, 2, 4 }, 3), 4, 2, m.in_proj_weight, m.in_proj_bias,
            nil, nil, false, 0, m.out_proj.weight, m.out_proj.bias,
            { training = false, key_padding_mask = bools(kpm_b) })
        check(E.functional.out, out, "out")
        check(E.functional.w, w, "weights")
    end)

    it("raises PyTorch's errors", function()
        local ok, err = pcall(nn.MultiheadAttention, 5, 2)
        assert.is_false(ok)
        assert.matches("tide: MultiheadAttention: embed_dim 5 must be divisible by num_heads 2",
            tostring(err), 1, true)
        local m = nn.MultiheadAttention(4, 2):double()
        local q, k = inp({ 2, 2, 4 }, 1), inp({ 3, 2, 4 }, 2)
        ok, err = pcall(m, q, k, k, { attn_mask = tide.zeros({ 2, 2 }, { dtype = "float64" }) })
        assert.matches("The shape of the 2D attn_mask is {2, 2}, but should be {2, 3}",
            tostring(err), 1, true)
        ok, err = pcall(m, q, k, k, { attn_mask = tide.zeros({ 2, 2, 2 }, { dtype = "float64" }) })
        assert.matches("The shape of the 3D attn_mask is {2, 2, 2}, but should be {4, 2, 3}",
            tostring(err), 1, true)
        ok, err = pcall(m, q, k, k, { key_padding_mask = bools({ { false, true }, { true,
        false } }) })
        assert.matches("tide: MultiheadAttention: expected key_padding_mask of shape {2, 3}, " ..
            "got {2, 2}", tostring(err), 1, true)
    end)
end)

local function relu_sq(x)
    return x:relu() ^ 2
end

describe("Transformer layers as PyTorch 1.13's", function()
    it("have PyTorch's attributes", function()
        local F = nn.functional
        local l = nn.TransformerEncoderLayer(4, 2, { dim_feedforward = 6 })
        assert.are.same({ false, 1 }, { l.norm_first, l.activation_relu_or_gelu })
        assert.are.equal(F.relu, l.activation)
        local g = nn.TransformerEncoderLayer(4, 2, { activation = "gelu", norm_first = true })
        assert.are.same({ true, 2 }, { g.norm_first, g.activation_relu_or_gelu })
        assert.are.equal(F.gelu, g.activation)
        assert.are.equal(0, nn.TransformerEncoderLayer(4, 2, { activation = relu_sq })
            .activation_relu_or_gelu)
        local d = nn.TransformerDecoderLayer(4, 2, { dim_feedforward = 6 })
        assert.are.equal(F.relu, d.activation)
        assert.is_false(d.norm_first)
        local e = nn.TransformerEncoder(l, 2)
        assert.are.same({ 2, true, true }, { e.num_layers, e.enable_nested_tensor, e.mask_check })
        assert.is_nil(e.norm)
        local t = nn.Transformer({ d_model = 4, nhead = 2, num_encoder_layers = 1,
            num_decoder_layers = 1, dim_feedforward = 6 })
        assert.are.same({ 4, 2, false }, { t.d_model, t.nhead, t.batch_first })
        assert.are.same({ 1, 1 }, { t.encoder.num_layers, t.decoder.num_layers })
    end)

    local function enc(key, opts, call, bf)
        it(key, function()
            opts.dim_feedforward, opts.dropout = 6, 0
            local l = nn.TransformerEncoderLayer(4, 2, opts)
            setp(l)
            check(E[key].out, l(inp(bf and { 2, 3, 4 } or { 3, 2, 4 }, 1), call), "out")
        end)
    end
    enc("enc_post", {}, {})
    enc("enc_pre_gelu", { norm_first = true, activation = "gelu" }, {})
    enc("enc_fn", { activation = relu_sq }, { src_key_padding_mask = bools(kpm_b) })
    enc("enc_bf", { batch_first = true }, { src_key_padding_mask = bools(kpm_b) }, true)

    local function dec(key, opts, call)
        it(key, function()
            opts.dim_feedforward, opts.dropout = 6, 0
            local l = nn.TransformerDecoderLayer(4, 2, opts)
            setp(l)
            check(E[key].out, l(inp({ 2, 2, 4 }, 1), inp({ 3, 2, 4 }, 2), call), "out")
        end)
    end
    dec("dec_post", {}, { tgt_mask = nn.Transformer.generate_square_subsequent_mask(2,
        { dtype = "float64" }), memory_mask = bools(am2b), memory_key_padding_mask = bools(kpm_b) })
    dec("dec_pre", { norm_first = true, activation = "gelu" }, { memory_mask = inp({ 2, 3 }, 8) })

    it("TransformerEncoder of 2 layers and a final norm", function()
        local l = nn.TransformerEncoderLayer(4, 2, { dim_feedforward = 6, dropout = 0 })
        local st = nn.TransformerEncoder(l, 2, { norm = nn.LayerNorm(4),
            enable_nested_tensor = false })
        local names = setp(st)
        -- PyTorch's names with tide's 1-based lists (docs/API.md)
        for i, n in ipairs(E.stack.names) do
            E.stack.names[i] = n:gsub("layers%.(%d)", function(d)
                return "layers." .. (tonumber(d) + 1) -- (5.3: "0" + 1 is 1.0)
            end)
        end
        assert.are.same(E.stack.names, names)
        check(E.stack.out, st(inp({ 3, 2, 4 }, 1), { mask = inp({ 3, 3 }, 4) }), "out")
    end)

    it("generate_square_subsequent_mask: -inf above the diagonal, 0 elsewhere", function()
        local sq = nn.Transformer.generate_square_subsequent_mask(3)
        assert.are.equal("float32", sq.dtype)
        check(E.square.out, sq, "mask")
    end)
end)
