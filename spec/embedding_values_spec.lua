-- nn.Embedding / F.embedding, nn.EmbeddingBag / F.embedding_bag, F.one_hot, nn.Bilinear,
-- nn.Linear, F.normalize, F.cosine_similarity, F.pairwise_distance and the small layers
-- against PyTorch 1.13 (float64): R holds what PyTorch printed for the same cases (0-based
-- ids, offsets, padding_idx and dims there; 1-based here, as docs/API.md says).
local R = {
    emb_attrs = {5, 3, 3, nil, 2.0, false, false},
    maxnorm_2_y = {{{-0.9058876740878655, -1.1478261318992293, -0.33445853751385674},
        {-0.6484104223033713, -1.1918729974812214, -0.6395330353787795}, {-0.6484104223033713,
        -1.1918729974812214, -0.6395330353787795}}, {{-0.3445310376039136, -1.1504948232757055,
        -0.8986989742065297}, {-0.9058876740878655, -1.1478261318992293, -0.33445853751385674},
        {0.7839305710512564, 1.1805235856594902, 0.4917486598758374}}},
    maxnorm_2_w = {{-0.9058876740878655, -1.1478261318992293, -0.33445853751385674},
        {0.7839305710512564, 1.1805235856594902, 0.4917486598758374}, {-0.6484104223033713,
        -1.1918729974812214, -0.6395330353787795}, {0.8403340736532818, 1.9812147113897407,
        1.3005756803142337}, {-0.3445310376039136, -1.1504948232757055, -0.8986989742065297}},
    maxnorm_1_y = {{{-0.5689838427181161, -0.7209442649254422, -0.2100718547651387},
        {-0.39221274141330054, -0.7209442656674078, -0.3868429568717256}, {-0.39221274141330054,
        -0.7209442656674078, -0.3868429568717256}}, {{-0.21589638705035955, -0.720944264971921,
        -0.5631593104831204}, {-0.5689838427181161, -0.7209442649254422, -0.2100718547651387},
        {0.47874541144308863, 0.7209442654812219, 0.30031028664074433}}},
    maxnorm_1_w = {{-0.5689838427181161, -0.7209442649254422, -0.2100718547651387},
        {0.47874541144308863, 0.7209442654812219, 0.30031028664074433}, {-0.39221274141330054,
        -0.7209442656674078, -0.3868429568717256}, {0.8403340736532818, 1.9812147113897407,
        1.3005756803142337}, {-0.21589638705035955, -0.720944264971921, -0.5631593104831204}},
    pad_grad = {{-0.1828794148466234, -0.7604591292045129, -0.9803830325958496},
        {0.2030048638187504, 0.7860702961410383, 0.9994345855010047}, {0.0, 0.0, 0.0}, {0.0,
        0.0, 0.0}, {0.7539022543433046, 0.15337386203786524, -0.5192886541166841}},
    padneg_grad = {{-0.1828794148466234, -0.7604591292045129, -0.9803830325958496},
        {0.2030048638187504, 0.7860702961410383, 0.9994345855010047}, {-0.7557099712460832,
        -0.16089080878054673, 0.509597815042715}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}},
    freq_grad = {{-0.0914397074233117, -0.38022956460225643, -0.4901915162979248},
        {0.2030048638187504, 0.7860702961410383, 0.9994345855010047}, {-0.3778549856230416,
        -0.08044540439027337, 0.2547989075213575}, {0.0, 0.0, 0.0}, {0.7539022543433046,
        0.15337386203786524, -0.5192886541166841}},
    mfreq_grad = {{-0.0914397074233117, -0.38022956460225643, -0.4901915162979248},
        {0.2030048638187504, 0.7860702961410383, 0.9994345855010047}, {-0.3778549856230416,
        -0.08044540439027337, 0.2547989075213575}, {0.0, 0.0, 0.0}, {0.7539022543433046,
        0.15337386203786524, -0.5192886541166841}},
    fp_freeze = {false, nil, 4, 2},
    fp_nofreeze = {true, 1, 0.5},
    fp_y = {{0.09165453249322576, -0.49152760016657915}, {-0.4800363678796861,
        -0.13987507087754544}, {0.30192008619347027, -0.39855261671757636}},
    fp_w = {{0.09165453249322576, -0.49152760016657915}, {-0.4800363678796861,
        -0.13987507087754544}, {0.6569865987187891, 0.9893582466233818}, {0.30192008619347027,
        -0.39855261671757636}},
    sparse_kind = {true, true},
    sparse_grad = {{2.0, 2.0, 2.0}, {1.0, 1.0, 1.0}, {2.0, 2.0, 2.0}, {0.0, 0.0, 0.0}, {1.0,
        1.0, 1.0}},
    bag_sum_y = {{-0.17493782883564601, -0.9720294518068785, -0.8754416795303543}, {0.0, 0.0,
        0.0}, {0.13226372016157562, 0.02920986381531354, -0.10069940661455923},
        {-1.300823606197298, -1.958914481213842, -0.8159884161993608}},
    bag_sum_g = {{0.7539022543433046, 0.15337386203786524, -0.5192886541166841},
        {0.7648421872844885, 0.16996714290024104, -0.5048461045998571}, {1.518744441627793,
        0.32334100493810625, -1.0241347587165412}, {0.18651236942257488, 0.7755658785102496,
        0.9998586363834151}, {0.9513545567070634, 0.9455330214104907, 0.495012531783558}},
    bagl_sum_y = {{-0.17493782883564601, -0.9720294518068785, -0.8754416795303543}, {0.0, 0.0,
        0.0}, {0.13226372016157562, 0.02920986381531354, -0.10069940661455923},
        {-1.300823606197298, -1.958914481213842, -0.8159884161993608}},
    bagp_sum_y = {{0.11296548782941929, -0.010631959927321688, -0.12445443275867835}, {0.0, 0.0,
        0.0}, {0.4201670368266409, 0.9906073556948704, 0.6502878401571168}, {-1.300823606197298,
        -1.958914481213842, -0.8159884161993608}},
    bagp_sum_g = {{0.7539022543433046, 0.15337386203786524, -0.5192886541166841},
        {0.7648421872844885, 0.16996714290024104, -0.5048461045998571}, {1.518744441627793,
        0.32334100493810625, -1.0241347587165412}, {0.18651236942257488, 0.7755658785102496,
        0.9998586363834151}, {0.0, 0.0, 0.0}},
    bag_mean_y = {{-0.058312609611882005, -0.3240098172689595, -0.2918138931767848}, {0.0, 0.0,
        0.0}, {0.06613186008078781, 0.01460493190765677, -0.050349703307279614},
        {-0.650411803098649, -0.979457240606921, -0.4079942080996804}},
    bag_mean_g = {{0.3769511271716523, 0.07668693101893262, -0.25964432705834206},
        {0.25494739576149617, 0.056655714300080345, -0.16828203486661902}, {0.6318985229331484,
        0.13334264531901296, -0.4279263619249611}, {0.09325618471128744, 0.3877829392551248,
        0.49992931819170755}, {0.3482035804727836, 0.4444386535552052, 0.3316472833250885}},
    bagl_mean_y = {{-0.058312609611882005, -0.3240098172689595, -0.2918138931767848}, {0.0, 0.0,
        0.0}, {0.06613186008078781, 0.01460493190765677, -0.050349703307279614},
        {-0.650411803098649, -0.979457240606921, -0.4079942080996804}},
    bagp_mean_y = {{0.05648274391470964, -0.005315979963660844, -0.06222721637933917}, {0.0,
        0.0, 0.0}, {0.4201670368266409, 0.9906073556948704, 0.6502878401571168},
        {-0.650411803098649, -0.979457240606921, -0.4079942080996804}},
    bagp_mean_g = {{0.3769511271716523, 0.07668693101893262, -0.25964432705834206},
        {0.38242109364224425, 0.08498357145012052, -0.25242305229992856}, {0.7593722208138965,
        0.16167050246905312, -0.5120673793582706}, {0.18651236942257488, 0.7755658785102496,
        0.9998586363834151}, {0.0, 0.0, 0.0}},
    bag_max_y = {{0.6569865987187891, 0.9893582466233818, 0.4121184852417566}, {0.0, 0.0, 0.0},
        {0.4201670368266409, 0.9906073556948704, 0.6502878401571168}, {-0.5440211108893698,
        -0.9589242746631385, -0.27941549819892586}},
    bag_max_g = {{0.0, 0.15337386203786524, -0.5192886541166841}, {0.7648421872844885,
        0.16996714290024104, -0.5048461045998571}, {0.7539022543433046, 0.0, 0.0},
        {0.18651236942257488, 0.7755658785102496, 0.9998586363834151}, {0.0, 0.0, 0.0}},
    bagl_max_y = {{0.6569865987187891, 0.9893582466233818, 0.4121184852417566}, {0.0, 0.0, 0.0},
        {0.4201670368266409, 0.9906073556948704, 0.6502878401571168}, {-0.5440211108893698,
        -0.9589242746631385, -0.27941549819892586}},
    bagp_max_y = {{0.6569865987187891, 0.9893582466233818, 0.4121184852417566}, {0.0, 0.0, 0.0},
        {0.4201670368266409, 0.9906073556948704, 0.6502878401571168}, {-0.5440211108893698,
        -0.9589242746631385, -0.27941549819892586}},
    bagp_max_g = {{0.0, 0.15337386203786524, -0.5192886541166841}, {0.7648421872844885,
        0.16996714290024104, -0.5048461045998571}, {0.7539022543433046, 0.0, 0.0},
        {0.18651236942257488, 0.7755658785102496, 0.9998586363834151}, {0.0, 0.0, 0.0}},
    bag2d_y = {{0.6569865987187891, 0.9893582466233818, 0.4121184852417566},
        {-0.2879033166650653, -0.9613974918795568, -0.750987246771676}, {0.4201670368266409,
        0.9906073556948704, 0.6502878401571168}},
    bag2d_g = {{0.0, 0.0, 0.0}, {0.7648421872844885, 0.16996714290024104, -0.5048461045998571},
        {0.0, 0.0, 0.0}, {0.18651236942257488, 0.7755658785102496, 0.9998586363834151},
        {-0.9422223406686581, -0.9364566872907963, -0.4902608213407002}},
    bagw_y = {{0.2967077769186337, -0.4281256538967193, -0.7593423329220389}, {0.0, 0.0, 0.0},
        {1.1885252813136562, 2.731472694114722, 1.7631167087784314}, {-0.7271879097948648,
        -0.68839375708168, -0.016693558798062558}},
    bagw_g = {{1.1308533815149568, 0.23006079305679786, -0.7789329811750262},
        {0.38242109364224425, 0.08498357145012052, -0.25242305229992856}, {-1.330268878041967,
        -0.28499753942864, 0.8943125951873703}, {0.5595371082677246, 2.3266976355307487,
        2.9995759091502454}, {1.5763124669246207, 0.5338257554280444, -0.7597275501038605}},
    bagw_pg = {0.46259304975614884, -0.31516902723090967, -0.00447360119394094,
        -1.5502057046414015, 1.4968435267862175, -0.5725317287131664, -0.284874873464661},
    bagw_err_mean = "raised",
    bagw_err_max = "raised",
    bag_attrs = {5, 3, nil, 2.0, false, "mean", false, false, nil},
    bagmn_y = {{-0.13934059257068565, -0.7745628233982912, -0.6976555664729812}, {0.0, 0.0,
        0.0}, {0.10450369825394112, 0.020909426429571498, -0.08190887562538585},
        {-1.0361987309274912, -1.559799419586967, -0.6493277152617575}},
    bagmn_w = {{-0.6039251160585769, -0.7652174212661529, -0.22297235834257115},
        {0.5226203807008376, 0.7870157237729934, 0.32783243991722494}, {-0.4322736148689142,
        -0.7945819983208142, -0.4263553569191863}, {0.3341910566565502, 0.7879059752800419,
        0.517223773845634}, {-0.22968735840260907, -0.7669965488504704, -0.5991326494710199}},
    bagfp = {false, "mean", nil},
    onehot = {{{1, 0, 0}, {0, 0, 1}}, {{0, 1, 0}, {1, 0, 0}}},
    onehot4 = {{0, 1, 0, 0}, {1, 0, 0, 0}},
    bil_attrs = {2, 3, 2, {2, 2, 3}, {2}},
    bil_y = {{-0.15496049996038067, -0.37715030837436997}, {0.1906162463377371,
        -0.11996023772317178}, {-0.21435561874921158, -0.5769321673520669},
        {-0.2861263426841698, -0.5524029848508245}},
    bil_gw = {{{0.9715180585983787, 1.2930917735140723, 1.4105147299012712},
        {1.0033205031006207, 1.2622165284529547, 1.3218363175868777}}, {{-0.15431347298369003,
        0.3694027639138163, 0.8347984268194353}, {0.0048950062823353985, 0.44364550865593255,
        0.8123541400927619}}},
    bil_gb = {-0.4899482351835901, -0.48695014059886754},
    bil_g1 = {{1.7023950963323828, -1.6722970007171647}, {0.20312298966740625,
        -0.33247159486478756}, {2.6673505490496603, -2.6993425182214192}, {-1.16001847455985,
        1.0660393886644113}},
    bil_g2 = {{0.016134828238183394, -0.14052153087374183, -0.16798304254859076},
        {-0.19410644464732044, -0.05545830522769627, 0.13417794425919366}, {-0.2694379375016741,
        -0.26807301297368336, -0.02024299659972769}, {0.14580918801073245, 0.2756680468706476,
        0.1520789747460222}},
    bil_nobias = true,
    lin_nobias = {true, 3, 2},
    lin_1d = {1.0213383049188858, -1.1156706519070962},
    lin_3d = {{{-1.6102299989204927, 1.6879201326391995}, {-1.9764143278764603,
        2.0377042640834224}}, {{-1.6521802703079413, 1.6756596709635303}, {-0.7507921107960257,
        0.7282589457446464}}},
    flin_1dw = {4.5, -1.0},
    flin_1dw_b = "raised",
    flin_1dw3 = {{0.021692030611322632, 0.16337202321952593}, {-0.3451661848948513,
        0.5200518430326837}},
    flin_1dw1 = 4.5,
    norm_2_1_y = {{0.6, 0.8, 0.0}, {0.0, 0.0, 0.0}},
    norm_2_1_g = {{0.0815829542539914, -0.06118721569049354, -0.10096922091997143},
        {-942222340668.6581, -936456687290.7964, -490260821340.7002}},
    norm_1_1_y = {{0.42857142857142855, 0.5714285714285714, 0.0}, {0.0, 0.0, 0.0}},
    norm_1_1_g = {{0.0485612281129998, -0.03642092108474984, -0.07212087208569387},
        {-942222340668.6581, -936456687290.7964, -490260821340.7002}},
    norm_inf_1_y = {{0.75, 1.0, 0.0}, {0.0, 0.0, 0.0}},
    norm_inf_1_g = {{0.19121054682112212, -0.14340791011584159, -0.12621152614996428},
        {-942222340668.6581, -936456687290.7964, -490260821340.7002}},
    norm_3_0_y = {{1.0, 1.0000000000000002, 0.0}, {0.0, 0.0, 0.0}},
    norm_3_0_g = {{0.0, -2.0816681711721685e-17, -504846104599.8571}, {-0.31407411355621934,
        -0.2341141718226991, -490260821340.7002}},
    norm_eps = {{0.01, 0.0}},
    cos_y = {0.524890659167824, 0.009486832980505138, 0.0},
    cos_ga = {{0.01593089364456807, -0.14656422153002627, 0.09239918313849481},
        {161.22886518785495, 53.74832989560788, -0.03224899793736473}, {-291.4730343900615,
        -291.4730343900615, -291.4730343900615}},
    cos_gb = {{0.05097885966261783, 0.25489429831308913, 0.11470243424089013},
        {5.374832989560796e-05, -0.00016124498968682363, 0.0010749665979121576}, {0.0, 0.0,
        0.0}},
    cos_dim0 = {0.1561831323065102, -0.5773502691896258, 0.8944271909800396},
    cos_small = {0.010000000000000002},
    cos_attrs = {1, 1e-08},
    pd_2_y = {2.0615540254873266, 1.7320508075688771e-06},
    pd_2_ga = {{0.1855017398314515, 3.7100273765742764e-07, 0.742005846317593},
        {0.09813057570684576, 0.09813057570684576, 0.09813057570684576}},
    pd_2_gb = {{-0.1855017398314515, -3.7100273765742764e-07, -0.742005846317593},
        {-0.09813057570684576, -0.09813057570684576, -0.09813057570684576}},
    pd_1_y = {2.5000030000000004, 3e-06},
    pd_1_ga = {{0.7648421872844885, 0.7648421872844885, 0.7648421872844885},
        {0.16996714290024104, 0.16996714290024104, 0.16996714290024104}},
    pd_1_gb = {{-0.7648421872844885, -0.7648421872844885, -0.7648421872844885},
        {-0.16996714290024104, -0.16996714290024104, -0.16996714290024104}},
    pd_0_y = {3.0, 3.0},
    pd_0_ga = nil,
    pd_0_gb = nil,
    pd_inf_y = {2.000001, 1e-06},
    pd_inf_ga = {{0.0, 0.0, 0.7648421872844885}, {0.056655714300080345, 0.056655714300080345,
        0.056655714300080345}},
    pd_inf_gb = {{-0.0, -0.0, -0.7648421872844885}, {-0.056655714300080345,
        -0.056655714300080345, -0.056655714300080345}},
    pd_3_y = {2.0103639308690266, 1.4422495703074094e-06},
    pd_3_ga = {{0.04731122719078269, 1.8924415178576665e-13, 0.756977364119863},
        {0.08171167960475005, 0.08171167960475005, 0.08171167960475005}},
    pd_3_gb = {{-0.04731122719078269, -1.8924415178576665e-13, -0.756977364119863},
        {-0.08171167960475005, -0.08171167960475005, -0.08171167960475005}},
    pd_keep = {{2.0615540254873266}, {1.7320508075688771e-06}},
    pd_eps = {2.7386127875258306, 0.8660254037844386},
    pd_1d = 2.2360675302865967,
    pd_attrs = {2.0, 1e-06, false},
    flat_attrs = {1, -1},
    flat_shape = {2, 12, 5},
    flat_shape2 = {6},
    unflat_attrs = {-1, {2, 3}},
    unflat_shape = {4, 2, 3},
    unflat_shape2 = {4, 2, 3},
    ident = {1.0, 2.0},
}

local tide = require("tide")
local nn, F = tide.nn, tide.nn.functional

local function T(t, dtype)
    return tide.tensor(t, { dtype = dtype or "float64" })
end
-- PyTorch's script's formulas: W[i][j] = sin(s * (i * d + j)) (1-based), G[k] = cos(0.7 * k)
local function W(n, d, s)
    local t = {}
    for i = 1, n do
        t[i] = {}
        for j = 1, d do
            t[i][j] = math.sin((s or 1) * (i * d + j))
        end
    end
    return T(t)
end
local function G(shape)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    local t = {}
    for k = 1, n do
        t[k] = math.cos(0.7 * k)
    end
    return T(t):view(shape)
end
-- loss = sum(y * G): y's upstream gradient is G
local function back(y)
    (y * G(y.shape)):sum():backward()
    return y
end
local function same(got, want, path)
    path = path or ""
    if type(want) == "table" then
        assert(type(got) == "table", path .. ": expected a table, got " .. tostring(got))
        assert(#got == #want, ("%s: length %d, expected %d"):format(path, #got, #want))
        for i = 1, #want do
            same(got[i], want[i], path .. "[" .. i .. "]")
        end
    elseif type(want) == "number" then
        assert(type(got) == "number", path .. ": expected a number, got " .. tostring(got))
        local tol = 1e-10 * math.max(1, math.abs(want))
        assert(math.abs(got - want) <= tol, ("%s: %.17g, expected %.17g"):format(path, got, want))
    else
        assert(got == want, ("%s: %s, expected %s"):format(path, tostring(got), tostring(want)))
    end
end
local function close(t, want)
    same(tide.is_tensor(t) and t:totable() or t, want)
end
local IDS = { { 1, 3, 3 }, { 5, 1, 2 } } -- PyTorch's {{0, 2, 2}, {4, 0, 1}}, 1-based
local function ids()
    return T(IDS, "int64")
end

describe("embedding values against PyTorch 1.13", function()
    it("nn.Embedding's attributes (negative padding_idx stored 1-based)", function()
        local m = nn.Embedding(5, 3, { padding_idx = -2 })
        local r = R.emb_attrs
        same({ m.num_embeddings, m.embedding_dim, m.padding_idx }, { r[1], r[2], r[3] + 1 })
        assert.is_nil(m.max_norm)
        same({ m.norm_type, m.scale_grad_by_freq, m.sparse }, { r[5], r[6], r[7] })
    end)

    it("max_norm renorms the looked-up rows of weight in place (norm_type 2 and 1)", function()
        for _, p in ipairs { 2, 1 } do
            local w = W(5, 3) * 2
            local y = F.embedding(ids(), w, { max_norm = 1.5, norm_type = p })
            close(y, R["maxnorm_" .. p .. "_y"])
            close(w, R["maxnorm_" .. p .. "_w"])
        end
    end)

    it("nn.Embedding reads max_norm and norm_type set after construction", function()
        local m = nn.Embedding(5, 3):double()
        tide.no_grad(function() m.weight:copy_(W(5, 3) * 2) end)
        m.max_norm, m.norm_type = 1.5, 1
        close(m(ids()), R.maxnorm_1_y)
        close(m.weight, R.maxnorm_1_w)
    end)

    it("padding_idx's gradient row stays 0 (and negative padding_idx)", function()
        for _, c in ipairs { { 3, "pad_grad" }, { -1, "padneg_grad" } } do
            local w = W(5, 3):requires_grad_()
            back(F.embedding(ids(), w, { padding_idx = c[1] }))
            close(w.grad, R[c[2]])
        end
    end)

    it("scale_grad_by_freq divides each row's gradient by its count", function()
        local w = W(5, 3):requires_grad_()
        back(F.embedding(ids(), w, { scale_grad_by_freq = true }))
        close(w.grad, R.freq_grad)
        local m = nn.Embedding(5, 3, { scale_grad_by_freq = true }):double()
        tide.no_grad(function() m.weight:copy_(W(5, 3)) end)
        back(m(ids()))
        close(m.weight.grad, R.mfreq_grad)
    end)

    it("Embedding.from_pretrained: freeze, padding_idx, max_norm", function()
        local m = nn.Embedding.from_pretrained(W(4, 2))
        local r = R.fp_freeze
        same({ m.weight.requires_grad, m.num_embeddings, m.embedding_dim }, { r[1], r[3], r[4] })
        assert.is_nil(m.padding_idx)
        m = nn.Embedding.from_pretrained(W(4, 2), false, 2, 0.5)
        r = R.fp_nofreeze
        same({ m.weight.requires_grad, m.padding_idx, m.max_norm }, { r[1], r[2] + 1, r[3] })
        close(m(T({ 1, 2, 4 }, "int64")), R.fp_y)
        close(m.weight, R.fp_w)
    end)

    it("sparse = true: the same gradient's values", function()
        local m = nn.Embedding(5, 3, { sparse = true }):double()
        tide.no_grad(function() m.weight:copy_(W(5, 3)) end)
        m(ids()):sum():backward()
        assert.is_true(m.sparse)
        close(m.weight.grad, R.sparse_grad)
    end)
    pending("sparse = true: PyTorch's gradient is a sparse COO tensor (is_sparse true); tide's " ..
        "is dense, as docs/API.md documents (no sparse autograd)")
end)

describe("embedding_bag values against PyTorch 1.13", function()
    local INP = { 2, 3, 5, 5, 4, 1, 3 } -- PyTorch's {1, 2, 4, 4, 3, 0, 2}
    local function inp()
        return T(INP, "int64")
    end
    local function offs(last)
        return T(last and { 1, 4, 4, 6, 8 } or { 1, 4, 4, 6 }, "int64")
    end

    it("modes sum, mean, max with an empty bag: values and gradients", function()
        for _, mode in ipairs { "sum", "mean", "max" } do
            local w = W(5, 3):requires_grad_()
            close(back(F.embedding_bag(inp(), w, offs(), { mode = mode })),
                R["bag_" .. mode .. "_y"])
            close(w.grad, R["bag_" .. mode .. "_g"])
            local y = F.embedding_bag(inp(), W(5, 3), offs(true), { mode = mode,
                include_last_offset = true })
            close(y, R["bagl_" .. mode .. "_y"])
        end
    end)

    it("padding_idx is left out of the bag (and of the mean's count)", function()
        for _, mode in ipairs { "sum", "mean", "max" } do
            local w = W(5, 3):requires_grad_()
            close(back(F.embedding_bag(inp(), w, offs(), { mode = mode, padding_idx = 5 })),
                R["bagp_" .. mode .. "_y"])
            close(w.grad, R["bagp_" .. mode .. "_g"])
        end
    end)

    it("a 2-D input without offsets (mode max)", function()
        local w = W(5, 3):requires_grad_()
        close(back(F.embedding_bag(T({ { 2, 3 }, { 5, 5 }, { 1, 4 } }, "int64"), w,
            { mode = "max" })), R.bag2d_y)
        close(w.grad, R.bag2d_g)
    end)

    it("per_sample_weights (sum only), their gradient too", function()
        local w = W(5, 3):requires_grad_()
        local psw = T({ 0.5, -1.0, 2.0, 0.25, 3.0, 1.5, -0.75 }):requires_grad_()
        close(back(F.embedding_bag(inp(), w, offs(), { mode = "sum", per_sample_weights = psw })),
            R.bagw_y)
        close(w.grad, R.bagw_g)
        close(psw.grad, R.bagw_pg)
        for _, mode in ipairs { "mean", "max" } do
            assert.equal("raised", R["bagw_err_" .. mode])
            assert.has_error(function()
                F.embedding_bag(inp(), W(5, 3), offs(), { mode = mode,
                    per_sample_weights = psw:detach() })
            end, 'tide: embedding_bag: per_sample_weights needs mode "sum", got mode "' ..
                mode .. '"')
        end
    end)

    it("nn.EmbeddingBag's forward: offsets, include_last_offset, per_sample_weights", function()
        local m = nn.EmbeddingBag(5, 3, { mode = "sum" }):double()
        tide.no_grad(function() m.weight:copy_(W(5, 3)) end)
        local psw = T({ 0.5, -1.0, 2.0, 0.25, 3.0, 1.5, -0.75 })
        close(m(inp(), offs(), psw), R.bagw_y)
        m.mode, m.include_last_offset = "max", true -- read by forward, as PyTorch's
        close(m(inp(), offs(true)), R.bagl_max_y)
    end)

    it("max_norm renorms the bag's rows in weight; nn.EmbeddingBag's attributes", function()
        local w = W(5, 3) * 2
        close(F.embedding_bag(inp(), w, offs(), { mode = "sum", max_norm = 1 }), R.bagmn_y)
        close(w, R.bagmn_w)
        local m, r = nn.EmbeddingBag(5, 3), R.bag_attrs
        same({ m.num_embeddings, m.embedding_dim, m.norm_type, m.scale_grad_by_freq, m.mode,
            m.sparse, m.include_last_offset }, { r[1], r[2], r[4], r[5], r[6], r[7], r[8] })
        assert.is_nil(m.max_norm)
        assert.is_nil(m.padding_idx)
        m = nn.EmbeddingBag.from_pretrained(W(4, 2))
        same({ m.weight.requires_grad, m.mode }, { R.bagfp[1], R.bagfp[2] })
        assert.is_nil(m.padding_idx)
    end)
end)

describe("small layers' values against PyTorch 1.13", function()
    it("F.one_hot: num_classes -1 and given (1-based classes)", function()
        close(F.one_hot(T({ { 1, 3 }, { 2, 1 } }, "int64")), R.onehot)
        close(F.one_hot(T({ 2, 1 }, "int64"), 4), R.onehot4)
        close(F.one_hot(T({ { 1, 3 }, { 2, 1 } }, "int64"), -1), R.onehot)
        assert.equal("int64", F.one_hot(T({ 2, 1 }, "int64"), 4).dtype)
    end)

    it("nn.Bilinear: attributes, values and gradients", function()
        local m, r = nn.Bilinear(2, 3, 2):double(), R.bil_attrs
        same({ m.in1_features, m.in2_features, m.out_features, m.weight.shape, m.bias.shape }, r)
        tide.no_grad(function()
            m.weight:copy_(W(2, 6):view(2, 2, 3))
            m.bias:copy_(T({ 0.1, -0.2 }))
        end)
        local x1, x2 = W(4, 2, 0.3):requires_grad_(), W(4, 3, 0.4):requires_grad_()
        close(back(m(x1, x2)), R.bil_y)
        close(m.weight.grad, R.bil_gw)
        close(m.bias.grad, R.bil_gb)
        close(x1.grad, R.bil_g1)
        close(x2.grad, R.bil_g2)
        assert.is_nil(nn.Bilinear(2, 3, 2, { bias = false }).bias)
    end)

    it("nn.Linear bias = false, 1-D and 3-D inputs; F.linear with a 1-D weight", function()
        local m = nn.Linear(3, 2, false):double()
        assert.is_nil(m.bias)
        same({ m.in_features, m.out_features }, { R.lin_nobias[2], R.lin_nobias[3] })
        tide.no_grad(function() m.weight:copy_(W(2, 3)) end)
        close(m(T({ 1, -2, 0.5 })), R.lin_1d)
        close(m(W(4, 3, 0.2):view(2, 2, 3)), R.lin_3d)
        local x = T({ { 1, 2, 3 }, { -1, 0.5, 0 } })
        close(F.linear(x, T({ 0.5, -1, 2 })), R.flin_1dw)
        close(F.linear(W(4, 3):view(2, 2, 3), T({ 0.5, -1, 2 })), R.flin_1dw3)
        close(F.linear(T({ 1, 2, 3 }), T({ 0.5, -1, 2 })):item(), R.flin_1dw1)
        assert.equal("raised", R.flin_1dw_b)
        assert.has_error(function() F.linear(x, T({ 0.5, -1, 2 }), T(0.25)) end,
            "tide: linear: a 1-D weight takes no bias; got bias {}")
    end)

    it("F.normalize: p 2, 1, inf, 3 over dims, a zero vector (values and gradients)", function()
        for _, c in ipairs { { 2, 1, "2" }, { 1, 1, "1" }, { math.huge, 1, "inf" },
            { 3, 0, "3" } } do
            local x = T({ { 3, 4, 0 }, { 0, 0, 0 } }):requires_grad_()
            local y = back(F.normalize(x, { p = c[1], dim = c[2] + 1 }))
            close(y, R[("norm_%s_%d_y"):format(c[3], c[2])])
            close(x.grad, R[("norm_%s_%d_g"):format(c[3], c[2])])
        end
        close(F.normalize(T({ { 1e-3, 0 } }), { eps = 0.1 }), R.norm_eps)
        close(F.normalize(T({ { 3, 4, 0 }, { 0, 0, 0 } }), { dim = -1 }), R.norm_2_1_y)
    end)

    it("F.cosine_similarity: eps clamps each norm; values, gradients, dim", function()
        local a = T({ { 1, 2, 3 }, { 1e-5, 0, 2e-5 }, { 0, 0, 0 } }):requires_grad_()
        local b = T({ { 0.5, -1, 2 }, { 3, 1, 0 }, { 1, 1, 1 } }):requires_grad_()
        close(back(F.cosine_similarity(a, b, { eps = 1e-3 })), R.cos_y)
        close(a.grad, R.cos_ga)
        close(b.grad, R.cos_gb)
        close(F.cosine_similarity(a:detach(), b:detach(), { dim = 1 }), R.cos_dim0)
        close(F.cosine_similarity(T({ { 1e-3, 0 } }), T({ { 1e-3, 1e-3 } }), { eps = 1e-2 }),
            R.cos_small)
        local m = nn.CosineSimilarity()
        same({ m.dim, m.eps }, { R.cos_attrs[1] + 1, R.cos_attrs[2] })
    end)

    it("F.pairwise_distance: p 2, 1, 0, inf, 3; eps; keepdim; 1-D", function()
        for _, p in ipairs { 2, 1, 0, math.huge, 3 } do
            local k = p == math.huge and "inf" or tostring(p)
            local a = T({ { 1, 2, 3 }, { 0, 0, 0 } }):requires_grad_()
            local b = T({ { 0.5, 2, 1 }, { 0, 0, 0 } }):requires_grad_()
            local y = F.pairwise_distance(a, b, { p = p })
            close(y, R["pd_" .. k .. "_y"])
            if p ~= 0 then
                back(y)
                close(a.grad, R["pd_" .. k .. "_ga"])
                close(b.grad, R["pd_" .. k .. "_gb"])
            else -- a count: PyTorch's y requires grad and backward runs (tide's gradient is 0)
                assert.is_true(y.requires_grad)
                back(y)
                same(a.grad:totable(), { { 0, 0, 0 }, { 0, 0, 0 } })
            end
        end
        local a, b = T({ { 1, 2, 3 }, { 0, 0, 0 } }), T({ { 0.5, 2, 1 }, { 0, 0, 0 } })
        close(F.pairwise_distance(a, b, { keepdim = true }), R.pd_keep)
        close(F.pairwise_distance(a, b, { eps = 0.5 }), R.pd_eps)
        close(F.pairwise_distance(T({ 1, 2 }), T({ 0, 4 })):item(), R.pd_1d)
        local m = nn.PairwiseDistance()
        same({ m.norm, m.eps, m.keepdim }, R.pd_attrs)
    end)

    it("nn.Flatten / nn.Unflatten (negative dims), nn.Identity with arguments", function()
        local m = nn.Flatten()
        same({ m.start_dim, m.end_dim }, { R.flat_attrs[1] + 1, R.flat_attrs[2] })
        same(nn.Flatten(-3, -2)(tide.zeros(2, 3, 4, 5)).shape, R.flat_shape)
        same(nn.Flatten(1, -1)(tide.zeros(2, 3)).shape, R.flat_shape2)
        m = nn.Unflatten(-1, { 2, 3 })
        same({ m.dim, m.unflattened_size }, R.unflat_attrs)
        same(m(tide.zeros(4, 6)).shape, R.unflat_shape)
        same(nn.Unflatten(2, { 2, -1 })(tide.zeros(4, 6)).shape, R.unflat_shape2)
        close(nn.Identity(54, { unused = "abc" })(T({ 1, 2 })), R.ident)
    end)
    pending("nn.Unflatten with a named dim (PyTorch's Unflatten('features', (('C', 2), ...))): " ..
        "tide has no named tensors")
end)
