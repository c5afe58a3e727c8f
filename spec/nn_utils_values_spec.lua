-- nn_utils_values_spec.lua — tide.nn.utils against PyTorch 1.13's torch.nn.utils, value by value
-- (float64, 1e-10): clip_grad_norm_ (norm_type 2, 1, inf, 0.5, error_if_nonfinite, a parameter
-- without grad, foreach), clip_grad_value_, parameters_to_vector / vector_to_parameters,
-- weight_norm (dim 0, 1, -1, None) and remove_weight_norm, spectral_norm with u and v set to the
-- same vectors after construction (1 and 3 iterations, eps, eval mode, ConvTranspose's dim),
-- parametrizations.spectral_norm / orthogonal (matrix_exp, cayley, householder, with and without
-- the trivialization), parametrize (right_inverse, a chain, cached, remove with
-- leave_parametrized true and false, unsafe), prune (l1, random, ln_structured n = 1, 2, inf on
-- both dims, global, custom_from_mask, identity, repeated pruning, remove) and the fusions.
-- V is PyTorch's output (a throwaway script's, /tmp/nn_utils_values/torch_side.py in the audit):
-- inputs are S(shape, seed)[i] = 1.3 sin(0.37 i + seed) over the flat index i; PyTorch's dims
-- are 0-based (dim d is tide's d + 1), its state_dict keys compared through state_dict_to_torch.
local tide = require("tide")
local nn = tide.nn
local U = nn.utils
local prune, P, PZ = U.prune, U.parametrize, U.parametrizations

local V = {
    ["clip_2"] = {total = 8.981190937508869, dtype = "torch.float64", dim = 0, ["ga"] = {shape =
        {3, 2}, dtype="float64", data = {0.36540103625277365, 0.42551606357436467,
        0.42803948787725843, 0.3726297755199767, 0.26678637113136633, 0.12483468296156945}}, ["gb"]
        = {shape = {4}, dtype="float64", data = {0.3948540449079626, 0.30278644506600294,
        0.16973812031978505, 0.01371653726580304}}, cgrad_none = true},
    ["clip_1"] = {total = 25.72485110225805, dtype = "torch.float64", dim = 0, ["ga"] = {shape =
        {3, 2}, dtype="float64", data = {0.12757067864591282, 0.14855834444696933,
        0.149439335245827, 0.13009441307077502, 0.09314182238707436, 0.043582922991324435}}, ["gb"]
        = {shape = {4}, dtype="float64", data = {0.13785346366710027, 0.10571035232404923,
        0.059259840703618734, 0.00478878764443341}}, cgrad_none = true},
    ["clip_inf"] = {total = 3.8443047974586584, dtype = "torch.float64", dim = 0, ["ga"] = {shape =
        {3, 2}, dtype="float64", data = {0.8536617568041134, 0.9941044341428181,
        0.9999997398750118, 0.8705497720259711, 0.6232749764668124, 0.29164283675796215}}, ["gb"] =
        {shape = {4}, dtype="float64", data = {0.9224708312654191, 0.7073795172619852,
        0.3965477040644703, 0.03204501941120489}}, cgrad_none = true},
    ["clip_0.5"] = {total = 233.51465579766784, dtype = "torch.float64", dim = 0, ["ga"] = {shape =
        {3, 2}, dtype="float64", data = {0.01405366534912755, 0.016365745481945963,
        0.016462798738965716, 0.01433168941714659, 0.010260853165711036, 0.004801258574134694}},
        ["gb"] = {shape = {4}, dtype="float64", data = {0.015186455588065579, 0.011645449654023242,
        0.006528286740582824, 0.0005275508423820724}}, cgrad_none = true},
    ["clip_small"] = {total = 0.2112224192632056, ["g"] = {shape = {3}, dtype="float64", data =
        {0.10939122802502654, 0.12738804798181985, 0.12814349324862195}}},
    ["clip_nonfinite_raises"] = true,
    ["clip_foreach_raises"] = true,
    ["clip_inf_total"] = 1/0,
    ["clipv"] = {["g"] = {shape = {3, 2}, dtype="float64", data = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5}},
        ret_nil = true},
    ["p2v"] = {shape = {10}, dtype="float64", data = {0.1297834416408766, 0.5887521709927888,
        0.9680360559621172, 1.2163008020194017, 1.299944940448362, 1.20764762950503,
        0.25827013003357957, 0.7015216633541601, 1.0498255305266486, 1.2560404370965543}},
    ["v2p"] = {["a"] = {shape = {2, 3}, dtype="float64", data = {-1.24660155706208,
        -1.0288911098771059, -0.6719250777166574, -0.2240171384302945, 0.25421046963070754,
        0.6980318831824143}}, ["b"] = {shape = {4}, dtype="float64", data = {1.0473779559609773,
        1.2549663358723293, 1.2927009095365827, 1.1554744794291674}}},
    ["wn_0"] = {["g"] = {shape = {4, 1}, dtype="float64", data = {2.3576989840416775,
        3.0888318005700635, 1.0996644493101546, 2.7020222209821028}}, ["v"] = {shape = {4, 3},
        dtype="float64", data = {0.5062438450012458, 0.9049758102155637, 1.1812235449506483,
        1.2975982142468125, 1.238349052553074, 1.0114951559542975, 0.6477401351353906,
        0.19631652571224759, -0.2816776045035935, -0.721547992359251, -1.0637602443837342,
        -1.261997537655775}}, ["weight"] = {shape = {4, 3}, dtype="float64", data =
        {0.7593657675018686, 1.3574637153233455, 1.7718353174259724, 1.9463973213702188,
        1.857523578829611, 1.5172427339314463, 0.9716102027030861, 0.29447478856837145,
        -0.4225164067553904, -1.0823219885388766, -1.5956403665756014, -1.8929963064836626}},
        ["keys"] = {"bias", "weight_g", "weight_v"}},
    ["wn_0_removed"] = {["weight"] = {shape = {4, 3}, dtype="float64", data = {0.7593657675018686,
        1.3574637153233455, 1.7718353174259724, 1.9463973213702188, 1.857523578829611,
        1.5172427339314463, 0.9716102027030861, 0.29447478856837145, -0.4225164067553904,
        -1.0823219885388766, -1.5956403665756014, -1.8929963064836626}}, is_param = true, has_g =
        false},
    ["wn_1"] = {["g"] = {shape = {1, 3}, dtype="float64", data = {2.545691688787616,
        2.815294862865226, 3.0337074737166145}}, ["v"] = {shape = {4, 3}, dtype="float64", data =
        {0.5062438450012458, 0.9049758102155637, 1.1812235449506483, 1.2975982142468125,
        1.238349052553074, 1.0114951559542975, 0.6477401351353906, 0.19631652571224759,
        -0.2816776045035935, -0.721547992359251, -1.0637602443837342, -1.261997537655775}},
        ["weight"] = {shape = {4, 3}, dtype="float64", data = {0.7593657675018686,
        1.3574637153233455, 1.7718353174259724, 1.9463973213702188, 1.857523578829611,
        1.5172427339314463, 0.971610202703086, 0.2944747885683714, -0.42251640675539026,
        -1.0823219885388766, -1.5956403665756014, -1.8929963064836626}}, ["keys"] = {"bias",
        "weight_g", "weight_v"}},
    ["wn_1_removed"] = {["weight"] = {shape = {4, 3}, dtype="float64", data = {0.7593657675018686,
        1.3574637153233455, 1.7718353174259724, 1.9463973213702188, 1.857523578829611,
        1.5172427339314463, 0.971610202703086, 0.2944747885683714, -0.42251640675539026,
        -1.0823219885388766, -1.5956403665756014, -1.8929963064836626}}, is_param = true, has_g =
        false},
    ["wn_-1"] = {["g"] = {shape = {}, dtype="float64", data = {4.858992938389777}}, ["v"] = {shape
        = {4, 3}, dtype="float64", data = {0.5062438450012458, 0.9049758102155637,
        1.1812235449506483, 1.2975982142468125, 1.238349052553074, 1.0114951559542975,
        0.6477401351353906, 0.19631652571224759, -0.2816776045035935, -0.721547992359251,
        -1.0637602443837342, -1.261997537655775}}, ["weight"] = {shape = {4, 3}, dtype="float64",
        data = {0.7593657675018686, 1.3574637153233455, 1.7718353174259724, 1.9463973213702188,
        1.857523578829611, 1.5172427339314463, 0.971610202703086, 0.2944747885683714,
        -0.42251640675539026, -1.0823219885388766, -1.5956403665756014, -1.8929963064836626}},
        ["keys"] = {"bias", "weight_g", "weight_v"}},
    ["wn_-1_removed"] = {["weight"] = {shape = {4, 3}, dtype="float64", data = {0.7593657675018686,
        1.3574637153233455, 1.7718353174259724, 1.9463973213702188, 1.857523578829611,
        1.5172427339314463, 0.971610202703086, 0.2944747885683714, -0.42251640675539026,
        -1.0823219885388766, -1.5956403665756014, -1.8929963064836626}}, is_param = true, has_g =
        false},
    ["wn_None"] = {["g"] = {shape = {}, dtype="float64", data = {4.858992938389777}}, ["v"] =
        {shape = {4, 3}, dtype="float64", data = {0.5062438450012458, 0.9049758102155637,
        1.1812235449506483, 1.2975982142468125, 1.238349052553074, 1.0114951559542975,
        0.6477401351353906, 0.19631652571224759, -0.2816776045035935, -0.721547992359251,
        -1.0637602443837342, -1.261997537655775}}, ["weight"] = {shape = {4, 3}, dtype="float64",
        data = {0.7593657675018686, 1.3574637153233455, 1.7718353174259724, 1.9463973213702188,
        1.857523578829611, 1.5172427339314463, 0.971610202703086, 0.2944747885683714,
        -0.42251640675539026, -1.0823219885388766, -1.5956403665756014, -1.8929963064836626}},
        ["keys"] = {"bias", "weight_g", "weight_v"}},
    ["wn_None_removed"] = {["weight"] = {shape = {4, 3}, dtype="float64", data =
        {0.7593657675018686, 1.3574637153233455, 1.7718353174259724, 1.9463973213702188,
        1.857523578829611, 1.5172427339314463, 0.971610202703086, 0.2944747885683714,
        -0.42251640675539026, -1.0823219885388766, -1.5956403665756014, -1.8929963064836626}},
        is_param = true, has_g = false},
    ["wn_conv_d1"] = {["g"] = {shape = {1, 2, 1}, dtype="float64", data = {2.1216516376476995,
        2.5350310884983522}}},
    ["sn_1"] = {w_at_construction_is_orig = true, ["weight"] = {shape = {4, 3}, dtype="float64",
        data = {0.24125143974182536, 0.3524440249221845, 0.41593496471898916, 0.4231310582802051,
        0.3730583481007225, 0.2724939406016321, 0.13504875656897378, -0.020674643122938575,
        -0.17359982685729658, -0.30302908842012233, -0.39144478443900127, -0.4268802652345585}},
        ["u"] = {shape = {4}, dtype="float64", data = {0.5795301493753091, 0.5111813619553669,
        -0.12492478990097938, -0.622279855067384}}, ["v"] = {shape = {3}, dtype="float64", data =
        {0.20367788485353241, 0.5453004437877719, 0.8131191457753596}}, ["y"] = {shape = {2, 4},
        dtype="float64", data = {1.2698375698656246, 1.7197546086002748, 0.833808446427594,
        -0.03407334047655386, 1.1117815630463852, 1.7184460436985092, 0.9907007163388853,
        0.1067631338328201}}, ["keys"] = {"bias", "weight_orig", "weight_u", "weight_v"},
        ["ushape"] = {4}, ["vshape"] = {3}},
    ["sn_1_removed"] = {["weight"] = {shape = {4, 3}, dtype="float64", data = {0.24125143974182536,
        0.3524440249221845, 0.41593496471898916, 0.4231310582802051, 0.3730583481007225,
        0.2724939406016321, 0.13504875656897378, -0.020674643122938575, -0.17359982685729658,
        -0.30302908842012233, -0.39144478443900127, -0.4268802652345585}}, is_param = true},
    ["sn_3"] = {w_at_construction_is_orig = true, ["weight"] = {shape = {4, 3}, dtype="float64",
        data = {0.22528882913961923, 0.32912426055133703, 0.3884142672891346, 0.3951342250830462,
        0.34837461917041307, 0.2544641428522824, 0.12611313854435346, -0.01930668744207624,
        -0.16211344385498608, -0.28297890615066784, -0.3655445010129164, -0.3986353625098417}},
        ["u"] = {shape = {4}, dtype="float64", data = {0.5512164690416657, 0.568424003882651,
        -0.04570390960395871, -0.6090695434136953}}, ["v"] = {shape = {3}, dtype="float64", data =
        {0.5141218215932601, 0.6028984419489655, 0.6100755865113255}}, ["y"] = {shape = {2, 4},
        dtype="float64", data = {1.1944049003911377, 1.644920852080544, 0.842689732546995,
        0.04865874835611672, 1.0468068062496219, 1.643698869509632, 0.9892010894416831,
        0.18017665528038407}}, ["keys"] = {"bias", "weight_orig", "weight_u", "weight_v"},
        ["ushape"] = {4}, ["vshape"] = {3}},
    ["sn_3_removed"] = {["weight"] = {shape = {4, 3}, dtype="float64", data = {0.22528882913961923,
        0.32912426055133703, 0.3884142672891346, 0.3951342250830462, 0.34837461917041307,
        0.2544641428522824, 0.12611313854435346, -0.01930668744207624, -0.16211344385498608,
        -0.28297890615066784, -0.3655445010129164, -0.3986353625098417}}, is_param = true},
    ["sn_eps"] = {w_at_construction_is_orig = true, ["weight"] = {shape = {4, 3}, dtype="float64",
        data = {0.22536425938671154, 0.32923445653571975, 0.3885443145012742, 0.3952665222428587,
        0.3484912604779518, 0.2545493414537612, 0.1261553632087468, -0.019313151625009108,
        -0.16216772198841006, -0.28307365194385425, -0.36566689106723005, -0.3987688319055889}},
        ["u"] = {shape = {4}, dtype="float64", data = {0.5531851683790412, 0.5649702959398137,
        -0.050744070965824076, -0.610098167062438}}, ["v"] = {shape = {3}, dtype="float64", data =
        {0.4953374434821676, 0.6016826790281189, 0.6265929865886595}}, ["y"] = {shape = {2, 4},
        dtype="float64", data = {1.1947613524176317, 1.6452744739839908, 0.8426477646243801,
        0.048267803412421095, 1.0471138401103155, 1.644052082274074, 0.9892081758281284,
        0.1798297446026318}}, ["keys"] = {"bias", "weight_orig", "weight_u", "weight_v"},
        ["ushape"] = {4}, ["vshape"] = {3}},
    ["sn_eps_removed"] = {["weight"] = {shape = {4, 3}, dtype="float64", data =
        {0.22536425938671154, 0.32923445653571975, 0.3885443145012742, 0.3952665222428587,
        0.3484912604779518, 0.2545493414537612, 0.1261553632087468, -0.019313151625009108,
        -0.16216772198841006, -0.28307365194385425, -0.36566689106723005, -0.3987688319055889}},
        is_param = true},
    ["sn_eval"] = {w_at_construction_is_orig = true, ["weight"] = {shape = {4, 3}, dtype="float64",
        data = {-0.48074334397516993, -0.702317545903476, -0.8288363627142938, -0.8431760660788801,
        -0.7433958444174272, -0.5430004826416327, -0.2691125528707111, 0.041198498467205615,
        0.34593352630847934, 0.6038480742114339, 0.7800346180492443, 0.850647135641904}}, ["u"] =
        {shape = {4}, dtype="float64", data = {0.1365873306690885, -0.21915385796081316,
        -0.5452336000129421, -0.7975185321097635}}, ["v"] = {shape = {3}, dtype="float64", data =
        {-0.4825914926352976, -0.6006581747683346, -0.637428590761356}}, ["y"] = {shape = {2, 4},
        dtype="float64", data = {-2.1420099806159274, -1.6650038873393562, 1.2355123036913562,
        3.707929648366875, -1.8270507275853218, -1.6623963013810856, 0.9228720369152287,
        3.427283871970195}}, ["keys"] = {"bias", "weight_orig", "weight_u", "weight_v"}, ["ushape"]
        = {4}, ["vshape"] = {3}},
    ["sn_eval_removed"] = {["weight"] = {shape = {4, 3}, dtype="float64", data =
        {-0.48074334397516993, -0.702317545903476, -0.8288363627142938, -0.8431760660788801,
        -0.7433958444174272, -0.5430004826416327, -0.2691125528707111, 0.041198498467205615,
        0.34593352630847934, 0.6038480742114339, 0.7800346180492443, 0.850647135641904}}, is_param
        = true},
    ["sn_convT"] = {w_at_construction_is_orig = true, ["weight"] = {shape = {3, 2, 2},
        dtype="float64", data = {0.38146989459813957, 0.4896294015279704, 0.531519865916348,
        0.501471609925358, 0.4035515240406392, 0.2510126325227999, 0.06450035874649118,
        -0.13074173600129413, -0.30828855011851414, -0.44410995522416014, -0.5198231613041979,
        -0.5251807411024005}}, ["u"] = {shape = {2}, dtype="float64", data = {-0.424028110823834,
        -0.9056490276211698}}, ["v"] = {shape = {6}, dtype="float64", data = {-0.45803111079336034,
        -0.30607843053198985, 0.2915810795802763, 0.4477651938844634, 0.5109073710905623,
        0.3872776255481518}}, ["y"] = {shape = {1, 2, 4}, dtype="float64", data =
        {0.8708537271350989, 1.654488018528508, 2.0239470228384477, 1.2289180129578863,
        0.9668308119512838, 1.4683592569177857, 2.1888517700538745, 1.4786039314696542}}, ["keys"]
        = {"bias", "weight_orig", "weight_u", "weight_v"}, ["ushape"] = {2}, ["vshape"] = {6}},
    ["sn_convT_removed"] = {["weight"] = {shape = {3, 2, 2}, dtype="float64", data =
        {0.38146989459813957, 0.4896294015279704, 0.531519865916348, 0.501471609925358,
        0.4035515240406392, 0.2510126325227999, 0.06450035874649118, -0.13074173600129413,
        -0.30828855011851414, -0.44410995522416014, -0.5198231613041979, -0.5251807411024005}},
        is_param = true},
    ["sn_conv"] = {w_at_construction_is_orig = true, ["weight"] = {shape = {3, 2, 2},
        dtype="float64", data = {0.2830039949776817, 0.36324511751293215, 0.3943227174526863,
        0.3720305874367107, 0.2993858626855579, 0.18622066590248712, 0.047851375590150395,
        -0.09699437392736283, -0.22871238995498508, -0.32947525694052404, -0.3856451935374649,
        -0.38961986233249607}}, ["u"] = {shape = {3}, dtype="float64", data = {0.711287783726414,
        0.18900645330200017, -0.6770127394161539}}, ["v"] = {shape = {4}, dtype="float64", data =
        {0.3956172385106433, 0.5097830184416199, 0.5549520583267717, 0.5250109405151888}}, ["y"] =
        {shape = {1, 3, 2}, dtype="float64", data = {1.6756834883349263, 1.6108145120025659,
        1.008867922101212, 1.1508752682922516, -0.5016788354998439, -0.4110577856374692}}, ["keys"]
        = {"bias", "weight_orig", "weight_u", "weight_v"}, ["ushape"] = {3}, ["vshape"] = {4}},
    ["sn_conv_removed"] = {["weight"] = {shape = {3, 2, 2}, dtype="float64", data =
        {0.2830039949776817, 0.36324511751293215, 0.3943227174526863, 0.3720305874367107,
        0.2993858626855579, 0.18622066590248712, 0.047851375590150395, -0.09699437392736283,
        -0.22871238995498508, -0.32947525694052404, -0.3856451935374649, -0.38961986233249607}},
        is_param = true},
    ["psn"] = {["weight"] = {shape = {4, 3}, dtype="float64", data = {0.22528854643331422,
        0.32912384754593443, 0.3884137798829781, 0.3951337292442726, 0.34837418200847425,
        0.25446382353499597, 0.12611298028981618, -0.019306663214855167, -0.16211324042504738,
        -0.2829785510512994, -0.3655440423051519, -0.3986348622776251}}, ["u"] = {shape = {4},
        dtype="float64", data = {-0.5513058095689501, -0.5682686710881493, 0.0459313911632489,
        0.6091165152095631}}, ["v"] = {shape = {3}, dtype="float64", data = {-0.515319367964742,
        -0.6029637177758457, -0.6089997570166585}}, ["orig"] = {shape = {4, 3}, dtype="float64",
        data = {0.734035215413546, 1.0723514273399852, 1.2655299042039152, 1.2874248454030055,
        1.1350728733597715, 0.8290941127748548, 0.41090135348216994, -0.0629049763789384,
        -0.5281974127877419, -0.922000807261802, -1.1910157177742915, -1.2988322381933404}},
        ["keys"] = {"bias", "parametrizations.weight.0._u", "parametrizations.weight.0._v",
        "parametrizations.weight.original"}},
    ["psn_eval"] = {["weight"] = {shape = {4, 3}, dtype="float64", data = {-0.48074334397516993,
        -0.702317545903476, -0.8288363627142938, -0.8431760660788801, -0.7433958444174272,
        -0.5430004826416327, -0.2691125528707111, 0.041198498467205615, 0.34593352630847934,
        0.6038480742114339, 0.7800346180492443, 0.850647135641904}}, ["u"] = {shape = {4},
        dtype="float64", data = {0.1365873306690885, -0.21915385796081316, -0.5452336000129421,
        -0.7975185321097635}}},
    ["orth_matrix_exp_True"] = {["weight"] = {shape = {3, 3}, dtype="float64", data =
        {-0.893007779075254, -0.24053155620922828, 0.3803704470363712, -0.17467893599372003,
        -0.5936755801340072, -0.785516756582984, 0.4147582136994804, -0.7679152791943367,
        0.48814111499514173}}, ["keys"] = {"bias", "parametrizations.weight.0.base",
        "parametrizations.weight.original"}},
    ["orth_matrix_exp_False"] = {["weight"] = {shape = {3, 3}, dtype="float64", data =
        {0.8619743539174991, -0.5064598850965614, 0.022329307568476342, 0.46865832179000283,
        0.8128837042950965, 0.3458026325933037, -0.1932862918199006, -0.28760818500080837,
        0.938041545623142}}, ["keys"] = {"bias", "parametrizations.weight.original"}},
    ["orth_cayley_True"] = {["weight"] = {shape = {3, 3}, dtype="float64", data =
        {-0.8875780968211356, -0.2510658003544592, 0.38622672866561886, -0.1676758818951993,
        -0.6048313404821501, -0.7785010264612579, 0.42905701331412577, -0.7557413667802895,
        0.49473737059476525}}, ["keys"] = {"bias", "parametrizations.weight.0.base",
        "parametrizations.weight.original"}},
    ["orth_cayley_False"] = {["weight"] = {shape = {3, 3}, dtype="float64", data =
        {0.870259665247713, -0.4919830965866298, 0.024510155364042285, 0.4564506602840226,
        0.8241157963654706, 0.33538924983843177, -0.1852050479042576, -0.2806880596924941,
        0.941760746355912}}, ["keys"] = {"bias", "parametrizations.weight.original"}},
    ["orth_householder_True"] = {["weight"] = {shape = {3, 2}, dtype="float64", data = {0.0, 0.0,
        0.0, 0.0, 0.0, 0.0}}, ["keys"] = {"bias", "parametrizations.weight.0.base",
        "parametrizations.weight.original"}},
    ["orth_default"] = {["weight"] = {shape = {3, 3}, dtype="float64", data = {0.6372852920633039,
        -0.5136637694911219, -0.5744710509955753, 0.6361560031445996, 0.771395133930669,
        0.015971443615815373, 0.43494022139010935, -0.37563157383300017, 0.8183690637828791}},
        ["base"] = {shape = {3, 3}, dtype="float64", data = {0.6372852920633039,
        -0.5136637694911219, -0.5744710509955753, 0.6361560031445996, 0.771395133930669,
        0.015971443615815373, 0.43494022139010935, -0.37563157383300017, 0.8183690637828791}},
        ["orig"] = {shape = {3, 3}, dtype="float64", data = {-1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0,
        0.0, -1.0}}, map = "_OrthMaps.matrix_exp"},
    ["rp_sym"] = {["weight"] = {shape = {3, 3}, dtype="float64", data = {0.3841762686597414,
        0.8072817831475275, 1.12112549541634, 0.8072817831475275, 1.2716555888504582,
        1.087968428038047, 1.12112549541634, 1.087968428038047, -0.1535701126593626}}, ["orig"] =
        {shape = {3, 3}, dtype="float64", data = {0.3841762686597414, 0.8072817831475275,
        1.12112549541634, 0.0, 1.2716555888504582, 1.087968428038047, 0.0, 0.0,
        -0.1535701126593626}}, cls = "ParametrizedLinear", ["keys"] = {"bias",
        "parametrizations.weight.original"}, is_p = true, is_p_w = true, is_p_b = false},
    ["rp_assign"] = {["orig"] = {shape = {3, 3}, dtype="float64", data = {0.6232532001854639,
        0.9936276181331567, 1.2295191992844006, 0.0, 1.1926693418663528, 0.9249153586280977, 0.0,
        0.0, -0.40697066683386124}}, ["weight"] = {shape = {3, 3}, dtype="float64", data =
        {0.6232532001854639, 0.9936276181331567, 1.2295191992844006, 0.9936276181331567,
        1.1926693418663528, 0.9249153586280977, 1.2295191992844006, 0.9249153586280977,
        -0.40697066683386124}}},
    ["rp_chain"] = {["weight"] = {shape = {3, 3}, dtype="float64", data = {1.2465064003709279,
        1.9872552362663134, 2.459038398568801, 1.9872552362663134, 2.3853386837327055,
        1.8498307172561954, 2.459038398568801, 1.8498307172561954, -0.8139413336677225}}},
    ["rp_cached_same"] = true,
    ["rp_remove_true"] = {["weight"] = {shape = {3, 3}, dtype="float64", data =
        {1.2465064003709279, 1.9872552362663134, 2.459038398568801, 1.9872552362663134,
        2.3853386837327055, 1.8498307172561954, 2.459038398568801, 1.8498307172561954,
        -0.8139413336677225}}, cls = "Linear", ["keys"] = {"bias", "weight"}},
    ["rp_remove_false"] = {["weight"] = {shape = {3, 3}, dtype="float64", data =
        {0.6232532001854639, 0.9936276181331567, 1.2295191992844006, 0.0, 1.1926693418663528,
        0.9249153586280977, 0.0, 0.0, -0.40697066683386124}}},
    ["rp_unsafe_default_raises"] = true,
    ["rp_unsafe"] = {["weight"] = {shape = {2, 3}, dtype="float64", data = {0.3841762686597414,
        0.8072817831475275, 1.12112549541634, 1.2832301313180055, 1.2716555888504582,
        1.087968428038047}}},
    ["pr_l1_int"] = {["mask"] = {shape = {3, 4}, dtype="float64", data = {0.0, 1.0, 1.0, 1.0, 1.0,
        1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0}}, ["weight"] = {shape = {3, 4}, dtype="float64", data =
        {0.0, 0.8072817831475275, 1.12112549541634, 1.2832301313180055, 1.2716555888504582,
        1.087968428038047, 0.7570298443813069, 0.0, -0.0, -0.6099860536753453, -0.9838432439003068,
        -1.2245418664806613}}, ["keys"] = {"bias", "weight_mask", "weight_orig"}, ["params"] =
        {"bias", "weight_orig"}, ["buffers"] = {"weight_mask"}, is_pruned = true, hook =
        "L1Unstructured"},
    ["pr_l1_float"] = {["mask"] = {shape = {3, 4}, dtype="float64", data = {0.0, 1.0, 1.0, 1.0,
        1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0}}},
    ["pr_rand"] = {zeros = 6, ["shp"] = {3, 4}},
    ["pr_rand_int"] = {zeros = 5},
    ["pr_ln_1_0"] = {["mask"] = {shape = {3, 4}, dtype="float64", data = {1.0, 1.0, 1.0, 1.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}}},
    ["pr_ln_1_1"] = {["mask"] = {shape = {3, 4}, dtype="float64", data = {0.0, 0.0, 1.0, 1.0, 0.0,
        0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0}}},
    ["pr_ln_2_0"] = {["mask"] = {shape = {3, 4}, dtype="float64", data = {1.0, 1.0, 1.0, 1.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}}},
    ["pr_ln_2_1"] = {["mask"] = {shape = {3, 4}, dtype="float64", data = {0.0, 0.0, 1.0, 1.0, 0.0,
        0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0}}},
    ["pr_ln_inf_0"] = {["mask"] = {shape = {3, 4}, dtype="float64", data = {1.0, 1.0, 1.0, 1.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}}},
    ["pr_ln_inf_1"] = {["mask"] = {shape = {3, 4}, dtype="float64", data = {1.0, 0.0, 0.0, 1.0,
        1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0}}},
    ["pr_global"] = {["m1"] = {shape = {3, 4}, dtype="float64", data = {0.0, 1.0, 1.0, 1.0, 1.0,
        1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0}}, ["m2"] = {shape = {3}, dtype="float64", data = {0.0,
        0.0, 0.0}}, hook = "CustomFromMask"},
    ["pr_custom"] = {["mask"] = {shape = {3}, dtype="float64", data = {1.0, 1.0, 0.0}}, ["bias"] =
        {shape = {3}, dtype="float64", data = {1.2526256410423509, 1.2936083547532342, 0.0}}},
    ["pr_identity"] = {["mask"] = {shape = {3, 4}, dtype="float64", data = {1.0, 1.0, 1.0, 1.0,
        1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}}, is_pruned = true},
    ["pr_twice"] = {["mask"] = {shape = {3, 4}, dtype="float64", data = {0.0, 1.0, 1.0, 1.0, 1.0,
        1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0}}, hook = "PruningContainer", n = 2, ["names"] =
        {"L1Unstructured", "LnStructured"}},
    ["pr_thrice"] = {["mask"] = {shape = {3, 4}, dtype="float64", data = {0.0, 0.0, 1.0, 1.0, 1.0,
        1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}}, n = 3},
    ["pr_removed"] = {["weight"] = {shape = {3, 4}, dtype="float64", data = {0.0, 0.0,
        1.12112549541634, 1.2832301313180055, 1.2716555888504582, 1.087968428038047, 0.0, 0.0,
        -0.0, -0.0, -0.0, -0.0}}, ["keys"] = {"bias", "weight"}, is_pruned = false, is_param =
        true},
    ["fuse_conv"] = {["w"] = {shape = {3, 2, 2, 2}, dtype="float64", data = {0.04486525601349641,
        0.203527634543587, 0.33464350252949865, 0.4204669423316804, 0.4493821539888637,
        0.41747559925063854, 0.32906568062040925, 0.19611826583509978, 0.06819063118046058,
        -0.237971249137847, -0.5119248372589429, -0.7165918002050157, -0.8242714246774411,
        -0.8203897786518307, -0.7054722247081258, -0.49507231466999063, -0.2852813760553365,
        0.11690737998073777, 0.5032732705737311, 0.8215234849562107, 1.0285843495907547,
        1.0964311478155044, 1.015881133774459, 0.7978363739908761}}, ["b"] = {shape = {3},
        dtype="float64", data = {0.38007167175693013, 0.7169780419854176, 1.0296489181003636}},
        ["y"] = {shape = {1, 3, 2, 2}, dtype="float64", data = {-0.01649527606994705,
        -0.1413759375456678, -0.17206084688998713, -0.07371203622824912, 2.222698638519373,
        2.4001904608392914, 2.078540384831144, 1.6229323153620627, -1.8846984595574336,
        -2.037584128827658, -1.1334429541618531, -0.19878737669884972}}},
    ["fuse_conv_nobias"] = {["b"] = {shape = {3}, dtype="float64", data = {0.29078943853754224,
        0.2654826002869969, 0.14410345538291747}}},
    ["fuse_convT"] = {["w"] = {shape = {3, 2, 2, 2}, dtype="float64", data = {0.11682983154006472,
        0.5299891579872447, 0.8714169381923854, 1.0949025238148442, 1.0366896611738998,
        0.9630837221592037, 0.7591289193802402, 0.45242957859790933, 0.09537770999053106,
        -0.3328485510903682, -0.716025322244326, -1.0022914250591475, -1.0213668789666852,
        -1.016557074128452, -0.8741610381917474, -0.6134514066106019, -0.30444871986331223,
        0.12476209512816405, 0.5370869458294897, 0.8767195980015562, 0.9724560650229053,
        1.036600566591779, 0.9604460443855442, 0.7542996557278011}}, ["b"] = {shape = {2},
        dtype="float64", data = {-0.32855432142731905, -0.23295080727209122}}},
    ["fuse_weights"] = {["w"] = {shape = {3, 2, 2, 2}, dtype="float64", data =
        {0.04488324874920824, 0.20360925714565783, 0.3347777077616471, 0.4206355661453205,
        0.4495623739418692, 0.4176430234178202, 0.3291976489261613, 0.19619691698833006,
        0.0682120951074951, -0.23804615381961025, -0.512085972552221, -0.7168173572037834,
        -0.8245308753000506, -0.82064800747365, -0.7056942816695277, -0.4952281454029657,
        -0.2853613484708068, 0.11694015241647347, 0.5034143522652383, 0.8217537811583883,
        1.0288726907930061, 1.0967385083887746, 1.0161659139070496, 0.798060030027805}}, ["b"] =
        {shape = {3}, dtype="float64", data = {0.2907030328299211, 0.26528131111633857,
        0.14381272137201795}}, wparam = true},
    ["fuse_linear"] = {["w"] = {shape = {2, 3}, dtype="float64", data = {0.04488324874920824,
        0.20360925714565783, 0.3347777077616471, 0.7830508312194664, 0.836900678243072,
        0.7774799445450399}}, ["b"] = {shape = {2}, dtype="float64", data = {0.380021071743265,
        0.716918867135294}}},
}

local function S(shape, seed)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    local d = {}
    for i = 0, n - 1 do
        d[#d + 1] = math.sin(i * 0.37 + seed) * 1.3
    end
    return tide.tensor(d, { dtype = "float64" }):reshape(shape)
end

-- the differences between PyTorch's value e and tide's a (tensors by shape, dtype and values to
-- 1e-10; tables key by key), appended to out
local function cmp(out, k, e, a)
    local function diff(msg)
        out[#out + 1] = k .. ": " .. msg
    end
    if type(e) == "table" and e.shape then
        if type(a) ~= "userdata" and type(a) ~= "table" then
            return diff("expected a tensor, got " .. tostring(a))
        end
        local es = table.concat(e.shape, ",")
        local as = {}
        for i = 1, a:dim() do
            as[i] = a:size(i)
        end
        as = table.concat(as, ",")
        if es ~= as then
            return diff("shape {" .. es .. "} vs {" .. as .. "}")
        end
        if a.dtype ~= e.dtype then
            diff("dtype " .. e.dtype .. " vs " .. tostring(a.dtype))
        end
        local av = a:dim() == 0 and { a:item() } or a:reshape({ -1 }):totable()
        for i, x in ipairs(e.data) do
            local y = av[i]
            if not (x == y or math.abs(x - y) <= 1e-10 or (x ~= x and y ~= y)) then
                return diff(("value[%d] %.17g vs %.17g"):format(i, x, y))
            end
        end
    elseif type(e) == "table" then
        if type(a) ~= "table" then
            return diff("expected a table, got " .. tostring(a))
        end
        for kk, ev in pairs(e) do
            cmp(out, k .. "." .. tostring(kk), ev, a[kk])
        end
    elseif type(e) == "number" and type(a) == "number" then
        if not (e == a or math.abs(e - a) <= 1e-10) then
            diff(("%.17g vs %.17g"):format(e, a))
        end
    elseif e ~= a then
        diff(tostring(e) .. " vs " .. tostring(a))
    end
end

-- asserts that tide's values `got` are PyTorch's V[key] (every key of V[key] but `skip`)
local function check(key, got, skip)
    local e = {}
    for k, v in pairs(V[key]) do
        e[k] = v
    end
    for _, k in ipairs(skip or {}) do
        e[k] = nil
    end
    local out = {}
    cmp(out, key, e, got)
    assert.are.same({}, out)
end

-- the state_dict keys under PyTorch's names, sorted
local function keys(m)
    local r = {}
    for n in pairs(U.state_dict_to_torch(m:state_dict())) do
        r[#r + 1] = n
    end
    table.sort(r)
    return r
end

local function names(iter)
    local r = {}
    for n in iter do
        r[#r + 1] = n
    end
    table.sort(r)
    return r
end

local function is_param(m, name)
    for n in m:named_parameters() do
        if n == name then
            return true
        end
    end
    return false
end

local function set(t, v)
    tide.no_grad(function()
        t:copy_(v)
    end)
end

local function lin(i, o)
    return nn.Linear(i, o):to("float64")
end

describe("nn.utils against PyTorch 1.13", function()
    describe("clip_grad_norm_", function()
        for _, nt in ipairs({ 2, 1, math.huge, 0.5 }) do
            local key = "clip_" .. (nt == math.huge and "inf" or tostring(nt))
            it("norm_type " .. tostring(nt) .. ": total, clipped gradients, no grad", function()
                local a = S({ 3, 2 }, 0.1):requires_grad_(true)
                local b = S({ 4 }, 0.2):requires_grad_(true)
                local c = S({ 2 }, 0.3):requires_grad_(true)
                a.grad = S({ 3, 2 }, 1.0) * 3
                b.grad = S({ 4 }, 2.0) * 3
                local tot = U.clip_grad_norm_({ a, b, c }, 1.0, nt)
                assert.are.equal("number", type(tot))
                check(key, { total = tot, ga = a.grad, gb = b.grad, cgrad_none = c.grad == nil },
                    { "dtype", "dim" })
            end)
        end
        pending("clip_grad_norm_ returns the total norm as a Lua number (docs/API.md); PyTorch " ..
            "returns a 0-D tensor of the gradients' dtype (float64 here): changing it breaks " ..
            "every caller that compares it with a number")
        it("below max_norm, non-finite totals, foreach (2.0's)", function()
            local a = S({ 3 }, 0.1):requires_grad_(true)
            a.grad = S({ 3 }, 1.0) * 0.1
            check("clip_small", { total = U.clip_grad_norm_(a, 5.0), g = a.grad })
            a.grad = tide.tensor({ 1.0, math.huge, 2.0 }, { dtype = "float64" })
            assert.are.equal(V.clip_nonfinite_raises,
                not pcall(U.clip_grad_norm_, { a }, 1.0, { error_if_nonfinite = true }))
            assert.are.equal(V.clip_inf_total, U.clip_grad_norm_({ a }, 1.0))
            -- foreach is PyTorch 2.0's: 1.13 raises TypeError for it, as tide does
            assert.are.equal(V.clip_foreach_raises,
                not pcall(U.clip_grad_norm_, { a }, 1.0, { foreach = true }))
        end)
    end)

    it("clip_grad_value_, parameters_to_vector, vector_to_parameters", function()
        local a = S({ 3, 2 }, 0.1):requires_grad_(true)
        a.grad = S({ 3, 2 }, 1.0) * 2
        local r = U.clip_grad_value_({ a }, 0.5)
        check("clipv", { g = a.grad, ret_nil = r == nil })
        a = S({ 2, 3 }, 0.1):requires_grad_(true)
        local b = S({ 4 }, 0.2):requires_grad_(true)
        local out = {}
        cmp(out, "p2v", V.p2v, U.parameters_to_vector({ a, b }))
        assert.are.same({}, out)
        U.vector_to_parameters(S({ 10 }, 5.0), { a, b })
        check("v2p", { a = a, b = b })
    end)

    describe("weight_norm", function()
        -- PyTorch's dim 0 and 1 are tide's 1 and 2; -1 is the whole tensor in both, as None
        -- (tide's false) is
        for _, d in ipairs({ { "0", 1 }, { "1", 2 }, { "-1", -1 }, { "None", false } }) do
            local key = "wn_" .. d[1]
            it("dim " .. d[1] .. ": weight_g, weight_v, the weight, remove_weight_norm", function()
                local m = lin(3, 4)
                set(m.weight, S({ 4, 3 }, 0.4))
                U.weight_norm(m, { dim = d[2] })
                tide.no_grad(function()
                    m.weight_g:mul_(1.5)
                end)
                m(S({ 2, 3 }, 0.9))
                check(key, { g = m.weight_g, v = m.weight_v, weight = m.weight, keys = keys(m) })
                U.remove_weight_norm(m)
                check(key .. "_removed", { weight = m.weight, is_param = is_param(m, "weight"),
                    has_g = m.weight_g ~= nil })
            end)
        end
        it("a Conv1d's dim 1 (tide's 2)", function()
            local m = nn.Conv1d(2, 3, 2):to("float64")
            set(m.weight, S({ 3, 2, 2 }, 0.5))
            U.weight_norm(m, { dim = 2 })
            check("wn_conv_d1", { g = m.weight_g })
        end)
    end)

    describe("spectral_norm", function()
        local function case(m, iters, eps, seedw, key, train)
            set(m.weight, S(m.weight:size(), seedw))
            set(m.bias, S(m.bias:size(), 0.1))
            U.spectral_norm(m, { n_power_iterations = iters, eps = eps })
            local w0 = m.weight:clone() -- PyTorch's weight.data until the first forward
            local u = S(m.weight_u:size(), 3.0)
            set(m.weight_u, u / u:norm())
            local v = S(m.weight_v:size(), 4.0)
            set(m.weight_v, v / v:norm())
            if not train then
                m:eval()
            end
            local x = m.__name == "Linear" and S({ 2, m.in_features }, 0.7)
                or S({ 1, m.in_channels, 3 }, 0.7)
            local y = m(x)
            check(key, { w_at_construction_is_orig = tide.equal(w0, m.weight_orig),
                weight = m.weight, u = m.weight_u, v = m.weight_v, y = y, keys = keys(m),
                ushape = { m.weight_u:size(1) }, vshape = { m.weight_v:size(1) } })
            U.remove_spectral_norm(m)
            check(key .. "_removed", { weight = m.weight, is_param = is_param(m, "weight") })
        end
        it("1 and 3 power iterations, eps", function()
            case(lin(3, 4), 1, 1e-12, 0.6, "sn_1", true)
            case(lin(3, 4), 3, 1e-12, 0.6, "sn_3", true)
            case(lin(3, 4), 2, 0.5, 0.6, "sn_eps", true)
        end)
        it("eval mode: no power iteration", function()
            case(lin(3, 4), 1, 1e-12, 0.6, "sn_eval", false)
        end)
        it("ConvTranspose1d (dim 2, PyTorch's 1) and Conv1d", function()
            case(nn.ConvTranspose1d(3, 2, 2):to("float64"), 1, 1e-12, 0.8, "sn_convT", true)
            case(nn.Conv1d(2, 3, 2):to("float64"), 2, 1e-12, 0.8, "sn_conv", true)
        end)
    end)

    describe("parametrizations", function()
        it("spectral_norm: training read iterates, eval read does not", function()
            local m = lin(3, 4)
            set(m.weight, S({ 4, 3 }, 0.6))
            PZ.spectral_norm(m, { n_power_iterations = 2 })
            local pm = m.parametrizations.weight[1]
            local u, v = S({ 4 }, 3.0), S({ 3 }, 4.0)
            set(pm._u, u / u:norm())
            set(pm._v, v / v:norm())
            local w = m.weight
            check("psn", { weight = w, u = pm._u, v = pm._v,
                orig = m.parametrizations.weight.original, keys = keys(m) })
            m:eval()
            set(pm._u, u / u:norm())
            set(pm._v, v / v:norm())
            check("psn_eval", { weight = m.weight, u = pm._u })
        end)
        for _, mp in ipairs({ "matrix_exp", "cayley", "householder" }) do
            for _, triv in ipairs({ true, false }) do
                if not (mp == "householder" and not triv) then
                    local key = ("orth_%s_%s"):format(mp, triv and "True" or "False")
                    local what = ("orthogonal %s, use_trivialization %s"):format(mp,
                        tostring(triv))
                    it(what, function()
                        local m = mp ~= "householder" and lin(3, 3) or lin(2, 3)
                        local shp = m.weight:size()
                        set(m.weight, S(shp, 0.2))
                        PZ.orthogonal(m, { orthogonal_map = mp, use_trivialization = triv })
                        set(m.parametrizations.weight.original, S(shp, 1.1) * 0.5)
                        if triv then
                            local B = tide.linalg.qr(S({ 3, 3 }, 2.2))
                            set(m.parametrizations.weight[1].base, B)
                        end
                        check(key, { weight = m.weight, keys = keys(m) })
                    end)
                end
            end
        end
        it("orthogonal's defaults on a square weight: base, original, map", function()
            local m = lin(3, 3)
            -- + I: S's 3 x 3 is singular (a sinusoid's samples), so diag(R)[3]'s sign is noise
            set(m.weight, S({ 3, 3 }, 0.2) + tide.eye(3, { dtype = "float64" }))
            PZ.orthogonal(m)
            local o = m.parametrizations.weight
            check("orth_default", { weight = m.weight, base = o[1].base, orig = o.original,
                map = "_OrthMaps." .. tostring(o[1].orthogonal_map) })
        end)
    end)

    it("parametrize: right_inverse, chains, cached, remove, unsafe", function()
        local Sym = nn.Module:extend("Sym")
        function Sym:forward(X)
            return X:triu() + X:triu(1):transpose(-1, -2)
        end
        function Sym:right_inverse(A)
            return A:triu()
        end
        local Twice = nn.Module:extend("Twice")
        function Twice:forward(X)
            return X * 2
        end
        local m = lin(3, 3)
        set(m.weight, S({ 3, 3 }, 0.3))
        P.register_parametrization(m, "weight", Sym())
        check("rp_sym", { weight = m.weight, orig = m.parametrizations.weight.original,
            cls = m.__name, keys = keys(m), is_p = P.is_parametrized(m),
            is_p_w = P.is_parametrized(m, "weight"), is_p_b = P.is_parametrized(m, "bias") })
        m.weight = S({ 3, 3 }, 0.5)
        check("rp_assign", { orig = m.parametrizations.weight.original, weight = m.weight })
        P.register_parametrization(m, "weight", Twice())
        check("rp_chain", { weight = m.weight })
        P.cached(function()
            assert.are.equal(V.rp_cached_same, rawequal(m.weight, m.weight))
        end)
        P.remove_parametrizations(m, "weight", true)
        check("rp_remove_true", { weight = m.weight, cls = m.__name, keys = keys(m) })
        m = lin(3, 3)
        set(m.weight, S({ 3, 3 }, 0.3))
        P.register_parametrization(m, "weight", Sym())
        m.weight = S({ 3, 3 }, 0.5)
        P.register_parametrization(m, "weight", Twice())
        P.remove_parametrizations(m, "weight", { leave_parametrized = false })
        check("rp_remove_false", { weight = m.weight })
        local Shrink = nn.Module:extend("Shrink")
        function Shrink:forward(X)
            return X:narrow(1, 1, 2)
        end
        m = lin(3, 3)
        set(m.weight, S({ 3, 3 }, 0.3))
        assert.are.equal(V.rp_unsafe_default_raises,
            not pcall(P.register_parametrization, m, "weight", Shrink()))
        P.register_parametrization(m, "weight", Shrink(), { unsafe = true })
        check("rp_unsafe", { weight = m.weight })
    end)

    describe("prune", function()
        local function plin(seed)
            seed = seed or 0.3
            local m = lin(4, 3)
            set(m.weight, S({ 3, 4 }, seed))
            set(m.bias, S({ 3 }, seed + 1))
            return m
        end
        local function hook1(m)
            for _, h in pairs(m._forward_pre_hooks) do
                return h
            end
        end
        it("l1_unstructured (a count and a fraction): names, mask, weight, hook", function()
            local m = plin()
            prune.l1_unstructured(m, "weight", 3)
            check("pr_l1_int", { mask = m.weight_mask, weight = m.weight, keys = keys(m),
                params = names(m:named_parameters()), buffers = names(m:named_buffers()),
                is_pruned = prune.is_pruned(m), hook = hook1(m).__name })
            m = plin()
            prune.l1_unstructured(m, "weight", 0.3)
            check("pr_l1_float", { mask = m.weight_mask })
        end)
        it("random_unstructured: counts", function()
            local m = plin()
            prune.random_unstructured(m, "weight", 0.5)
            check("pr_rand", { zeros = m.weight_mask:eq(0):sum():item(),
                shp = { m.weight_mask:size(1), m.weight_mask:size(2) } })
            m = plin()
            prune.random_unstructured(m, "weight", 5)
            check("pr_rand_int", { zeros = m.weight_mask:eq(0):sum():item() })
        end)
        it("ln_structured n = 1, 2, inf along both dims", function()
            for _, n in ipairs({ 1, 2, math.huge }) do
                for d = 0, 1 do
                    local m = plin()
                    prune.ln_structured(m, "weight", 0.5, n, d + 1)
                    check(("pr_ln_%s_%d"):format(n == math.huge and "inf" or tostring(n), d),
                        { mask = m.weight_mask })
                end
            end
        end)
        it("global_unstructured, custom_from_mask, identity", function()
            local m1, m2 = plin(0.3), plin(1.7)
            prune.global_unstructured({ { m1, "weight" }, { m2, "bias" } },
                { pruning_method = prune.L1Unstructured, amount = 6 })
            check("pr_global", { m1 = m1.weight_mask, m2 = m2.bias_mask,
                hook = hook1(m1).__name })
            local m = plin()
            prune.custom_from_mask(m, "bias", S({ 3 }, 9.0):gt(0):to("float64"))
            check("pr_custom", { mask = m.bias_mask, bias = m.bias })
            m = plin()
            prune.identity(m, "weight")
            check("pr_identity", { mask = m.weight_mask, is_pruned = prune.is_pruned(m) })
        end)
        it("pruning again: the PruningContainer's combined mask, then remove", function()
            local m = plin()
            prune.l1_unstructured(m, "weight", 3)
            prune.ln_structured(m, "weight", 1, 2, 1)
            local h = hook1(m)
            local nm = {}
            for i, x in ipairs(h) do
                nm[i] = x.__name
            end
            check("pr_twice", { mask = m.weight_mask, hook = h.__name, n = #h, names = nm })
            prune.l1_unstructured(m, "weight", 2)
            check("pr_thrice", { mask = m.weight_mask, n = #hook1(m) })
            prune.remove(m, "weight")
            check("pr_removed", { weight = m.weight, keys = keys(m),
                is_pruned = prune.is_pruned(m), is_param = is_param(m, "weight") })
        end)
    end)

    it("fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval", function()
        local conv = nn.Conv2d(2, 3, 2):to("float64")
        set(conv.weight, S({ 3, 2, 2, 2 }, 0.1))
        set(conv.bias, S({ 3 }, 0.2))
        local bn = nn.BatchNorm2d(3):to("float64")
        set(bn.weight, S({ 3 }, 0.3))
        set(bn.bias, S({ 3 }, 0.4))
        set(bn.running_mean, S({ 3 }, 0.5))
        set(bn.running_var, S({ 3 }, 0.6):abs() + 0.5)
        bn.eps = 1e-3
        conv:eval()
        bn:eval()
        local f = U.fuse_conv_bn_eval(conv, bn)
        check("fuse_conv", { w = f.weight, b = f.bias, y = f(S({ 1, 2, 3, 3 }, 0.7)) })
        conv.bias = nil
        check("fuse_conv_nobias", { b = U.fuse_conv_bn_eval(conv, bn).bias })
        local ct = nn.ConvTranspose2d(3, 2, 2):to("float64")
        set(ct.weight, S({ 3, 2, 2, 2 }, 0.1))
        set(ct.bias, S({ 2 }, 0.2))
        local bn2 = nn.BatchNorm2d(2):to("float64")
        set(bn2.running_mean, S({ 2 }, 0.5))
        set(bn2.running_var, S({ 2 }, 0.6):abs() + 0.5)
        ct:eval()
        bn2:eval()
        f = U.fuse_conv_bn_eval(ct, bn2, true)
        check("fuse_convT", { w = f.weight, b = f.bias })
        local w, b = U.fuse_conv_bn_weights(S({ 3, 2, 2, 2 }, 0.1), nil, S({ 3 }, 0.5),
            S({ 3 }, 0.6):abs() + 0.5, 1e-5, S({ 3 }, 0.3), S({ 3 }, 0.4))
        check("fuse_weights", { w = w, b = b, wparam = w.requires_grad })
        local l = lin(3, 2)
        set(l.weight, S({ 2, 3 }, 0.1))
        set(l.bias, S({ 2 }, 0.2))
        local bn1 = nn.BatchNorm1d(2):to("float64")
        set(bn1.weight, S({ 2 }, 0.3))
        set(bn1.bias, S({ 2 }, 0.4))
        set(bn1.running_mean, S({ 2 }, 0.5))
        set(bn1.running_var, S({ 2 }, 0.6):abs() + 0.5)
        l:eval()
        bn1:eval()
        f = U.fusion.fuse_linear_bn_eval(l, bn1)
        check("fuse_linear", { w = f.weight, b = f.bias })
    end)
end)
