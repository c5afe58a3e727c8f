-- tostring(t) / print(t) and tide.set_printoptions against PyTorch 1.13's str(t): the value part
-- (lua/format.c for real tensors, lua/tide/complex/format.lua for complex ones, the options in
-- lua/tide/print_options.lua). Each `want` is PyTorch 1.13's torch._tensor_str._tensor_str(t, 0)
-- (str(t) without "tensor(" and ", dtype=...)", so rows wrap from tide's indent) with
-- docs/API.md's documented differences applied to real tensors: whole-valued floats keep the
-- precision's digits (PyTorch's `1.` is `1.0000`, the width measured so), `true`/`false`, and
-- `...` for PyTorch's ` ...` in a summarized row. Complex tensors print PyTorch's own layout.
local tide = require("tide")
local NAN = 0 / 0
-- -0.0 as a value (PUC 5.1 folds the literals -0.0 and 0.0 of one function into one constant)
local NEG0 = -1 / math.huge

local function T(values, dtype)
    return tide.tensor(values, { dtype = dtype })
end
local C = tide.complex

-- the body of tostring(t) under opts (from the default profile), tide's last line dropped
local function body(t, opts)
    tide.set_printoptions({ profile = "default" })
    if opts then
        tide.set_printoptions(opts)
    end
    local ok, s = pcall(tostring, t)
    tide.set_printoptions({ profile = "default" })
    assert(ok, s)
    local b, n = s:gsub("\n%[tide%.Tensor of shape [^\n]*%]$", "")
    assert.are.equal(1, n, s)
    return b
end

local CASES = {
    {
        name = "mixed magnitudes fixed",
        make = function() return T({1.5, 250.25, -3.125}, "float32") end,
        want = "[  1.5000, 250.2500,  -3.1250]",
    },
    {
        name = "ratio > 1000 sci",
        make = function() return T({0.5, 1000.5}, "float32") end,
        want = "[5.0000e-01, 1.0005e+03]",
    },
    {
        name = "max > 1e8 sci",
        make = function() return T({150000000.0, 250000000.0}, "float32") end,
        want = "[1.5000e+08, 2.5000e+08]",
    },
    {
        name = "min < 1e-4 sci",
        make = function() return T({5e-05, 0.5}, "float32") end,
        want = "[5.0000e-05, 5.0000e-01]",
    },
    {
        name = "whole-valued floats",
        make = function() return T({1.0, 2.0, -30.0}, "float32") end,
        want = "[  1.0000,   2.0000, -30.0000]",
    },
    {
        name = "whole max exactly 1e8",
        make = function() return T({100000000.0, 50000000.0}, "float32") end,
        want = "[100000000.0000,  50000000.0000]",
    },
    {
        name = "whole ratio > 1000",
        make = function() return T({1.0, 2000.0}, "float32") end,
        want = "[1.0000e+00, 2.0000e+03]",
    },
    {
        name = "negative zero",
        make = function() return T({NEG0, 1.5}, "float32") end,
        want = "[-0.0000, 1.5000]",
    },
    {
        name = "negative zero only",
        make = function() return T({NEG0, 0.0}, "float32") end,
        want = "[-0.0000, 0.0000]",
    },
    {
        name = "nan mixed",
        make = function() return T({NAN, 1.5, -2.25}, "float32") end,
        want = "[    nan,  1.5000, -2.2500]",
    },
    {
        name = "nan and zero",
        make = function() return T({0.0, NAN}, "float32") end,
        want = "[0.0000, nan]",
    },
    {
        name = "inf mixed",
        make = function() return T({math.huge, -math.huge, 1.5}, "float32") end,
        want = "[   inf,   -inf, 1.5000]",
    },
    {
        name = "inf with whole",
        make = function() return T({1.0, -math.huge}, "float32") end,
        want = "[1.0000,   -inf]",
    },
    {
        name = "tiny",
        make = function() return T({1e-30, 3e-38}, "float32") end,
        want = "[1.0000e-30, 3.0000e-38]",
    },
    {
        name = "huge",
        make = function() return T({3e+38, -1e+30}, "float32") end,
        want = "[ 3.0000e+38, -1.0000e+30]",
    },
    {
        name = "float64",
        make = function() return T({0.3333333333333333, -2.5, 0.001}, "float64") end,
        want = "[ 3.3333e-01, -2.5000e+00,  1.0000e-03]",
    },
    {
        name = "float64 sci",
        make = function() return T({1e-10, 123456.0}, "float64") end,
        want = "[1.0000e-10, 1.2346e+05]",
    },
    {
        name = "float16",
        make = function() return T({0.1, -65504.0, 1.0}, "float16") end,
        want = "[ 9.9976e-02, -6.5504e+04,  1.0000e+00]",
    },
    {
        name = "float16 small",
        make = function() return T({0.333, 0.5}, "float16") end,
        want = "[0.3330, 0.5000]",
    },
    {
        name = "bfloat16",
        make = function() return T({0.1, 3.0, -10000000000.0}, "bfloat16") end,
        want = "[ 1.0010e-01,  3.0000e+00, -9.9992e+09]",
    },
    {
        name = "bfloat16 whole",
        make = function() return T({1.0, 2.0}, "bfloat16") end,
        want = "[1.0000, 2.0000]",
    },
    {
        name = "int64 negative",
        make = function() return T({-5, 12, 300}, "int64") end,
        want = "[ -5,  12, 300]",
    },
    {
        name = "int64 19 digits",
        make = function() return T({-9223372036854775808, 4611686018427387904, 7}, "int64") end,
        want = "[-9223372036854775808,  4611686018427387904,                    7]",
    },
    {
        name = "int32",
        make = function() return T({-7, 5}, "int32") end,
        want = "[-7,  5]",
    },
    {
        name = "bool",
        make = function() return T({true, false, true}, "bool") end,
        want = "[ true, false,  true]",
    },
    {
        name = "uint8",
        make = function() return T({0, 7, 255}, "uint8") end,
        want = "[  0,   7, 255]",
    },
    {
        name = "0-d float",
        make = function() return T(3.25, "float32") end,
        want = "3.2500",
    },
    {
        name = "0-d whole",
        make = function() return T(2.0, "float32") end,
        want = "2.0000",
    },
    {
        name = "0-d nan",
        make = function() return T(NAN, "float32") end,
        want = "nan",
    },
    {
        name = "0-d negative zero",
        make = function() return T(NEG0, "float32") end,
        want = "-0.0000",
    },
    {
        name = "0-d float64",
        make = function() return T(0.3333333333333333, "float64") end,
        want = "0.3333",
    },
    {
        name = "0-d float16",
        make = function() return T(0.5, "float16") end,
        want = "0.5000",
    },
    {
        name = "0-d bfloat16",
        make = function() return T(-2.5, "bfloat16") end,
        want = "-2.5000",
    },
    {
        name = "0-d int64",
        make = function() return T(-42, "int64") end,
        want = "-42",
    },
    {
        name = "0-d bool",
        make = function() return T(true, "bool") end,
        want = "true",
    },
    {
        name = "0-d uint8",
        make = function() return T(200, "uint8") end,
        want = "200",
    },
    {
        name = "empty {0}",
        make = function() return tide.zeros({0}, {dtype = 'float32'}) end,
        want = "[]",
    },
    {
        name = "empty {2, 0}",
        make = function() return tide.zeros({2, 0}, {dtype = 'float32'}) end,
        want = "[]",
    },
    {
        name = "empty int64 {2, 0}",
        make = function() return tide.zeros({2, 0}, {dtype = 'int64'}) end,
        want = "[]",
    },
    {
        name = "2-D",
        make = function() return T({1.5, -2.0, 3.25, 4.0, 5.5, -6.75}, "float32"):view({2, 3}) end,
        want = "[[ 1.5000, -2.0000,  3.2500],\n" ..
            " [ 4.0000,  5.5000, -6.7500]]",
    },
    {
        name = "3-D",
        make = function()
            return T({0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5}, "float32")
                :view({2, 3, 2})
        end,
        want = "[[[0.0000, 0.5000],\n" ..
            "  [1.0000, 1.5000],\n" ..
            "  [2.0000, 2.5000]],\n" ..
            "\n" ..
            " [[3.0000, 3.5000],\n" ..
            "  [4.0000, 4.5000],\n" ..
            "  [5.0000, 5.5000]]]",
    },
    {
        name = "3-D int64",
        make = function()
            return T({-6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5}, "int64"):view({3, 2, 2})
        end,
        want = "[[[-6, -5],\n" ..
            "  [-4, -3]],\n" ..
            "\n" ..
            " [[-2, -1],\n" ..
            "  [ 0,  1]],\n" ..
            "\n" ..
            " [[ 2,  3],\n" ..
            "  [ 4,  5]]]",
    },
    {
        name = "summarized 1-D",
        make = function() return tide.arange(0, 1200):float() end,
        want = "[0.0000e+00, 1.0000e+00, 2.0000e+00, ..., 1.1970e+03, 1.1980e+03,\n" ..
            " 1.1990e+03]",
    },
    {
        name = "summarized 2-D",
        make = function() return tide.arange(0, 1200):float():view(30, 40) / 4 end,
        want = "[[0.0000e+00, 2.5000e-01, 5.0000e-01, ..., 9.2500e+00, 9.5000e+00,\n" ..
            "  9.7500e+00],\n" ..
            " [1.0000e+01, 1.0250e+01, 1.0500e+01, ..., 1.9250e+01, 1.9500e+01,\n" ..
            "  1.9750e+01],\n" ..
            " [2.0000e+01, 2.0250e+01, 2.0500e+01, ..., 2.9250e+01, 2.9500e+01,\n" ..
            "  2.9750e+01],\n" ..
            " ...,\n" ..
            " [2.7000e+02, 2.7025e+02, 2.7050e+02, ..., 2.7925e+02, 2.7950e+02,\n" ..
            "  2.7975e+02],\n" ..
            " [2.8000e+02, 2.8025e+02, 2.8050e+02, ..., 2.8925e+02, 2.8950e+02,\n" ..
            "  2.8975e+02],\n" ..
            " [2.9000e+02, 2.9025e+02, 2.9050e+02, ..., 2.9925e+02, 2.9950e+02,\n" ..
            "  2.9975e+02]]",
    },
    {
        name = "summarized 3-D",
        make = function() return tide.arange(0, 1200):view(10, 10, 12) end,
        want = "[[[   0,    1,    2, ...,    9,   10,   11],\n" ..
            "  [  12,   13,   14, ...,   21,   22,   23],\n" ..
            "  [  24,   25,   26, ...,   33,   34,   35],\n" ..
            "  ...,\n" ..
            "  [  84,   85,   86, ...,   93,   94,   95],\n" ..
            "  [  96,   97,   98, ...,  105,  106,  107],\n" ..
            "  [ 108,  109,  110, ...,  117,  118,  119]],\n" ..
            "\n" ..
            " [[ 120,  121,  122, ...,  129,  130,  131],\n" ..
            "  [ 132,  133,  134, ...,  141,  142,  143],\n" ..
            "  [ 144,  145,  146, ...,  153,  154,  155],\n" ..
            "  ...,\n" ..
            "  [ 204,  205,  206, ...,  213,  214,  215],\n" ..
            "  [ 216,  217,  218, ...,  225,  226,  227],\n" ..
            "  [ 228,  229,  230, ...,  237,  238,  239]],\n" ..
            "\n" ..
            " [[ 240,  241,  242, ...,  249,  250,  251],\n" ..
            "  [ 252,  253,  254, ...,  261,  262,  263],\n" ..
            "  [ 264,  265,  266, ...,  273,  274,  275],\n" ..
            "  ...,\n" ..
            "  [ 324,  325,  326, ...,  333,  334,  335],\n" ..
            "  [ 336,  337,  338, ...,  345,  346,  347],\n" ..
            "  [ 348,  349,  350, ...,  357,  358,  359]],\n" ..
            "\n" ..
            " ...,\n" ..
            "\n" ..
            " [[ 840,  841,  842, ...,  849,  850,  851],\n" ..
            "  [ 852,  853,  854, ...,  861,  862,  863],\n" ..
            "  [ 864,  865,  866, ...,  873,  874,  875],\n" ..
            "  ...,\n" ..
            "  [ 924,  925,  926, ...,  933,  934,  935],\n" ..
            "  [ 936,  937,  938, ...,  945,  946,  947],\n" ..
            "  [ 948,  949,  950, ...,  957,  958,  959]],\n" ..
            "\n" ..
            " [[ 960,  961,  962, ...,  969,  970,  971],\n" ..
            "  [ 972,  973,  974, ...,  981,  982,  983],\n" ..
            "  [ 984,  985,  986, ...,  993,  994,  995],\n" ..
            "  ...,\n" ..
            "  [1044, 1045, 1046, ..., 1053, 1054, 1055],\n" ..
            "  [1056, 1057, 1058, ..., 1065, 1066, 1067],\n" ..
            "  [1068, 1069, 1070, ..., 1077, 1078, 1079]],\n" ..
            "\n" ..
            " [[1080, 1081, 1082, ..., 1089, 1090, 1091],\n" ..
            "  [1092, 1093, 1094, ..., 1101, 1102, 1103],\n" ..
            "  [1104, 1105, 1106, ..., 1113, 1114, 1115],\n" ..
            "  ...,\n" ..
            "  [1164, 1165, 1166, ..., 1173, 1174, 1175],\n" ..
            "  [1176, 1177, 1178, ..., 1185, 1186, 1187],\n" ..
            "  [1188, 1189, 1190, ..., 1197, 1198, 1199]]]",
    },
    {
        name = "wide row",
        make = function() return tide.arange(0, 30):float() * 1.5 + 0.25 end,
        want = "[ 0.2500,  1.7500,  3.2500,  4.7500,  6.2500,  7.7500,  9.2500, 10.7500,\n" ..
            " 12.2500, 13.7500, 15.2500, 16.7500, 18.2500, 19.7500, 21.2500, 22.7500,\n" ..
            " 24.2500, 25.7500, 27.2500, 28.7500, 30.2500, 31.7500, 33.2500, 34.7500,\n" ..
            " 36.2500, 37.7500, 39.2500, 40.7500, 42.2500, 43.7500]",
    },
    {
        name = "wide 2-D",
        make = function() return tide.arange(0, 40):float():view(2, 20) / 3 end,
        want = "[[ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n" ..
            "   2.6667,  3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n" ..
            "   5.3333,  5.6667,  6.0000,  6.3333],\n" ..
            " [ 6.6667,  7.0000,  7.3333,  7.6667,  8.0000,  8.3333,  8.6667,  9.0000,\n" ..
            "   9.3333,  9.6667, 10.0000, 10.3333, 10.6667, 11.0000, 11.3333, 11.6667,\n" ..
            "  12.0000, 12.3333, 12.6667, 13.0000]]",
    },
    {
        name = "precision 2",
        make = function() return T({0.3333333333333333, -2.5, 100.125}, "float32") end,
        opts = {precision = 2},
        want = "[  0.33,  -2.50, 100.12]",
    },
    {
        name = "precision 8",
        make = function() return T({0.3333333333333333, -2.5}, "float32") end,
        opts = {precision = 8},
        want = "[ 0.33333334, -2.50000000]",
    },
    {
        name = "precision 8 float64",
        make = function() return T({0.3333333333333333, -2.5}, "float64") end,
        opts = {precision = 8},
        want = "[ 0.33333333, -2.50000000]",
    },
    {
        name = "sci_mode true",
        make = function() return T({1.5, -2.5}, "float32") end,
        opts = {sci_mode = true},
        want = "[1.5000e+00, -2.5000e+00]",
    },
    {
        name = "sci_mode true whole",
        make = function() return T({1.0, 20.0}, "float32") end,
        opts = {sci_mode = true},
        want = "[1.0000e+00, 2.0000e+01]",
    },
    {
        name = "sci_mode false",
        make = function() return T({1e-05, 1.0}, "float32") end,
        opts = {sci_mode = false},
        want = "[    0.0000,     1.0000]",
    },
    {
        name = "sci_mode false huge",
        make = function() return T({1500000000.0, 1.0}, "float32") end,
        opts = {sci_mode = false},
        want = "[1500000000.0000,     1.0000]",
    },
    {
        name = "threshold 5",
        make = function() return T({1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5}, "float32") end,
        opts = {threshold = 5},
        want = "[1.5000, 2.5000, 3.5000, ..., 5.5000, 6.5000, 7.5000]",
    },
    {
        name = "threshold 5 2-D",
        make = function() return tide.arange(0, 64):view(8, 8) end,
        opts = {threshold = 5},
        want = "[[ 0,  1,  2, ...,  5,  6,  7],\n" ..
            " [ 8,  9, 10, ..., 13, 14, 15],\n" ..
            " [16, 17, 18, ..., 21, 22, 23],\n" ..
            " ...,\n" ..
            " [40, 41, 42, ..., 45, 46, 47],\n" ..
            " [48, 49, 50, ..., 53, 54, 55],\n" ..
            " [56, 57, 58, ..., 61, 62, 63]]",
    },
    {
        name = "edgeitems 1",
        make = function() return tide.arange(0, 1200):float() end,
        opts = {edgeitems = 1},
        want = "[   0.0000, ..., 1199.0000]",
    },
    {
        name = "edgeitems 1 3-D",
        make = function() return tide.arange(0, 1200):view(10, 10, 12) end,
        opts = {edgeitems = 1},
        want = "[[[   0, ...,   11],\n" ..
            "  ...,\n" ..
            "  [ 108, ...,  119]],\n" ..
            "\n" ..
            " ...,\n" ..
            "\n" ..
            " [[1080, ..., 1091],\n" ..
            "  ...,\n" ..
            "  [1188, ..., 1199]]]",
    },
    {
        name = "linewidth 40",
        make = function() return tide.arange(0, 20):float() / 4 end,
        opts = {linewidth = 40},
        want = "[0.0000, 0.2500, 0.5000, 0.7500, 1.0000,\n" ..
            " 1.2500, 1.5000, 1.7500, 2.0000, 2.2500,\n" ..
            " 2.5000, 2.7500, 3.0000, 3.2500, 3.5000,\n" ..
            " 3.7500, 4.0000, 4.2500, 4.5000, 4.7500]",
    },
    {
        name = "linewidth 40 2-D",
        make = function() return tide.arange(0, 24):view(2, 12) * 1000 end,
        opts = {linewidth = 40},
        want = "[[    0,  1000,  2000,  3000,  4000,\n" ..
            "   5000,  6000,  7000,  8000,  9000,\n" ..
            "  10000, 11000],\n" ..
            " [12000, 13000, 14000, 15000, 16000,\n" ..
            "  17000, 18000, 19000, 20000, 21000,\n" ..
            "  22000, 23000]]",
    },
    {
        name = "profile short",
        make = function() return T({0.3333333333333333, -2.5}, "float32") end,
        opts = {profile = "short"},
        want = "[ 0.33, -2.50]",
    },
    {
        name = "profile short summarized",
        make = function() return tide.arange(0, 1200):float() / 7 end,
        opts = {profile = "short"},
        want = "[0.00e+00, 1.43e-01, ..., 1.71e+02, 1.71e+02]",
    },
    {
        name = "profile full",
        make = function() return tide.arange(0, 1002) end,
        opts = {profile = "full"},
        want = "[   0,    1,    2,    3,    4,    5,    6,    7,    8,    9,   10,   11,   12,\n" ..
            "   13,   14,   15,   16,   17,   18,   19,   20,   21,   22,   23,   24,   25,\n" ..
            "   26,   27,   28,   29,   30,   31,   32,   33,   34,   35,   36,   37,   38,\n" ..
            "   39,   40,   41,   42,   43,   44,   45,   46,   47,   48,   49,   50,   51,\n" ..
            "   52,   53,   54,   55,   56,   57,   58,   59,   60,   61,   62,   63,   64,\n" ..
            "   65,   66,   67,   68,   69,   70,   71,   72,   73,   74,   75,   76,   77,\n" ..
            "   78,   79,   80,   81,   82,   83,   84,   85,   86,   87,   88,   89,   90,\n" ..
            "   91,   92,   93,   94,   95,   96,   97,   98,   99,  100,  101,  102,  103,\n" ..
            "  104,  105,  106,  107,  108,  109,  110,  111,  112,  113,  114,  115,  116,\n" ..
            "  117,  118,  119,  120,  121,  122,  123,  124,  125,  126,  127,  128,  129,\n" ..
            "  130,  131,  132,  133,  134,  135,  136,  137,  138,  139,  140,  141,  142,\n" ..
            "  143,  144,  145,  146,  147,  148,  149,  150,  151,  152,  153,  154,  155,\n" ..
            "  156,  157,  158,  159,  160,  161,  162,  163,  164,  165,  166,  167,  168,\n" ..
            "  169,  170,  171,  172,  173,  174,  175,  176,  177,  178,  179,  180,  181,\n" ..
            "  182,  183,  184,  185,  186,  187,  188,  189,  190,  191,  192,  193,  194,\n" ..
            "  195,  196,  197,  198,  199,  200,  201,  202,  203,  204,  205,  206,  207,\n" ..
            "  208,  209,  210,  211,  212,  213,  214,  215,  216,  217,  218,  219,  220,\n" ..
            "  221,  222,  223,  224,  225,  226,  227,  228,  229,  230,  231,  232,  233,\n" ..
            "  234,  235,  236,  237,  238,  239,  240,  241,  242,  243,  244,  245,  246,\n" ..
            "  247,  248,  249,  250,  251,  252,  253,  254,  255,  256,  257,  258,  259,\n" ..
            "  260,  261,  262,  263,  264,  265,  266,  267,  268,  269,  270,  271,  272,\n" ..
            "  273,  274,  275,  276,  277,  278,  279,  280,  281,  282,  283,  284,  285,\n" ..
            "  286,  287,  288,  289,  290,  291,  292,  293,  294,  295,  296,  297,  298,\n" ..
            "  299,  300,  301,  302,  303,  304,  305,  306,  307,  308,  309,  310,  311,\n" ..
            "  312,  313,  314,  315,  316,  317,  318,  319,  320,  321,  322,  323,  324,\n" ..
            "  325,  326,  327,  328,  329,  330,  331,  332,  333,  334,  335,  336,  337,\n" ..
            "  338,  339,  340,  341,  342,  343,  344,  345,  346,  347,  348,  349,  350,\n" ..
            "  351,  352,  353,  354,  355,  356,  357,  358,  359,  360,  361,  362,  363,\n" ..
            "  364,  365,  366,  367,  368,  369,  370,  371,  372,  373,  374,  375,  376,\n" ..
            "  377,  378,  379,  380,  381,  382,  383,  384,  385,  386,  387,  388,  389,\n" ..
            "  390,  391,  392,  393,  394,  395,  396,  397,  398,  399,  400,  401,  402,\n" ..
            "  403,  404,  405,  406,  407,  408,  409,  410,  411,  412,  413,  414,  415,\n" ..
            "  416,  417,  418,  419,  420,  421,  422,  423,  424,  425,  426,  427,  428,\n" ..
            "  429,  430,  431,  432,  433,  434,  435,  436,  437,  438,  439,  440,  441,\n" ..
            "  442,  443,  444,  445,  446,  447,  448,  449,  450,  451,  452,  453,  454,\n" ..
            "  455,  456,  457,  458,  459,  460,  461,  462,  463,  464,  465,  466,  467,\n" ..
            "  468,  469,  470,  471,  472,  473,  474,  475,  476,  477,  478,  479,  480,\n" ..
            "  481,  482,  483,  484,  485,  486,  487,  488,  489,  490,  491,  492,  493,\n" ..
            "  494,  495,  496,  497,  498,  499,  500,  501,  502,  503,  504,  505,  506,\n" ..
            "  507,  508,  509,  510,  511,  512,  513,  514,  515,  516,  517,  518,  519,\n" ..
            "  520,  521,  522,  523,  524,  525,  526,  527,  528,  529,  530,  531,  532,\n" ..
            "  533,  534,  535,  536,  537,  538,  539,  540,  541,  542,  543,  544,  545,\n" ..
            "  546,  547,  548,  549,  550,  551,  552,  553,  554,  555,  556,  557,  558,\n" ..
            "  559,  560,  561,  562,  563,  564,  565,  566,  567,  568,  569,  570,  571,\n" ..
            "  572,  573,  574,  575,  576,  577,  578,  579,  580,  581,  582,  583,  584,\n" ..
            "  585,  586,  587,  588,  589,  590,  591,  592,  593,  594,  595,  596,  597,\n" ..
            "  598,  599,  600,  601,  602,  603,  604,  605,  606,  607,  608,  609,  610,\n" ..
            "  611,  612,  613,  614,  615,  616,  617,  618,  619,  620,  621,  622,  623,\n" ..
            "  624,  625,  626,  627,  628,  629,  630,  631,  632,  633,  634,  635,  636,\n" ..
            "  637,  638,  639,  640,  641,  642,  643,  644,  645,  646,  647,  648,  649,\n" ..
            "  650,  651,  652,  653,  654,  655,  656,  657,  658,  659,  660,  661,  662,\n" ..
            "  663,  664,  665,  666,  667,  668,  669,  670,  671,  672,  673,  674,  675,\n" ..
            "  676,  677,  678,  679,  680,  681,  682,  683,  684,  685,  686,  687,  688,\n" ..
            "  689,  690,  691,  692,  693,  694,  695,  696,  697,  698,  699,  700,  701,\n" ..
            "  702,  703,  704,  705,  706,  707,  708,  709,  710,  711,  712,  713,  714,\n" ..
            "  715,  716,  717,  718,  719,  720,  721,  722,  723,  724,  725,  726,  727,\n" ..
            "  728,  729,  730,  731,  732,  733,  734,  735,  736,  737,  738,  739,  740,\n" ..
            "  741,  742,  743,  744,  745,  746,  747,  748,  749,  750,  751,  752,  753,\n" ..
            "  754,  755,  756,  757,  758,  759,  760,  761,  762,  763,  764,  765,  766,\n" ..
            "  767,  768,  769,  770,  771,  772,  773,  774,  775,  776,  777,  778,  779,\n" ..
            "  780,  781,  782,  783,  784,  785,  786,  787,  788,  789,  790,  791,  792,\n" ..
            "  793,  794,  795,  796,  797,  798,  799,  800,  801,  802,  803,  804,  805,\n" ..
            "  806,  807,  808,  809,  810,  811,  812,  813,  814,  815,  816,  817,  818,\n" ..
            "  819,  820,  821,  822,  823,  824,  825,  826,  827,  828,  829,  830,  831,\n" ..
            "  832,  833,  834,  835,  836,  837,  838,  839,  840,  841,  842,  843,  844,\n" ..
            "  845,  846,  847,  848,  849,  850,  851,  852,  853,  854,  855,  856,  857,\n" ..
            "  858,  859,  860,  861,  862,  863,  864,  865,  866,  867,  868,  869,  870,\n" ..
            "  871,  872,  873,  874,  875,  876,  877,  878,  879,  880,  881,  882,  883,\n" ..
            "  884,  885,  886,  887,  888,  889,  890,  891,  892,  893,  894,  895,  896,\n" ..
            "  897,  898,  899,  900,  901,  902,  903,  904,  905,  906,  907,  908,  909,\n" ..
            "  910,  911,  912,  913,  914,  915,  916,  917,  918,  919,  920,  921,  922,\n" ..
            "  923,  924,  925,  926,  927,  928,  929,  930,  931,  932,  933,  934,  935,\n" ..
            "  936,  937,  938,  939,  940,  941,  942,  943,  944,  945,  946,  947,  948,\n" ..
            "  949,  950,  951,  952,  953,  954,  955,  956,  957,  958,  959,  960,  961,\n" ..
            "  962,  963,  964,  965,  966,  967,  968,  969,  970,  971,  972,  973,  974,\n" ..
            "  975,  976,  977,  978,  979,  980,  981,  982,  983,  984,  985,  986,  987,\n" ..
            "  988,  989,  990,  991,  992,  993,  994,  995,  996,  997,  998,  999, 1000,\n" ..
            " 1001]",
    },
    {
        name = "profile default",
        make = function() return T({0.3333333333333333, -2.5}, "float32") end,
        opts = {profile = "default"},
        want = "[ 0.3333, -2.5000]",
    },
    {
        name = "profile short then precision 6",
        make = function() return T({0.3333333333333333}, "float32") end,
        opts = {profile = "short", precision = 6},
        want = "[0.333333]",
    },
    {
        name = "complex mixed",
        make = function() return C(T({1.5, -2.25}, "float32"), T({0.5, 3.0}, "float32")) end,
        want = "[ 1.5000+0.5000j, -2.2500+3.0000j]",
    },
    {
        name = "complex whole",
        make = function() return C(T({1.0, 0.5}, "float32"), T({2.0, -1.0}, "float32")) end,
        want = "[1.0000+2.j, 0.5000-1.j]",
    },
    {
        name = "complex sci",
        make = function() return C(T({1e-05, 2.0}, "float32"), T({3.0, 4.0}, "float32")) end,
        want = "[1.0000e-05+3.j, 2.0000e+00+4.j]",
    },
    {
        name = "complex nan inf",
        make = function() return C(T({NAN, 1.0}, "float32"), T({math.huge, NEG0}, "float32")) end,
        want = "[nan+infj, 1.-0.j]",
    },
    {
        name = "complex 2-D",
        make = function()
            return C(T({1.0, 2.5, -3.0, 4.0}, "float32"):view({2, 2}),
                T({0.0, 1.0, 2.0, -3.0}, "float32"):view({2, 2}))
        end,
        want = "[[ 1.0000+0.j,  2.5000+1.j],\n" ..
            " [-3.0000+2.j,  4.0000-3.j]]",
    },
    {
        name = "complex float64",
        make = function() return C(T({0.3333333333333333}, "float64"), T({-2.0}, "float64")) end,
        want = "[0.3333-2.j]",
    },
    {
        name = "complex 0-d",
        make = function() return C(T(1.5, "float32"), T(-2.0, "float32")) end,
        want = "1.5000-2.j",
    },
    {
        name = "complex empty {2, 0}",
        make = function()
            return C(T({}, "float32"):view({2, 0}), T({}, "float32"):view({2, 0}))
        end,
        want = "[]",
    },
    {
        name = "complex precision 2",
        make = function()
            return C(T({0.3333333333333333, 2.5}, "float32"), T({0.25, -1.0}, "float32"))
        end,
        opts = {precision = 2},
        want = "[0.33+0.25j, 2.50-1.00j]",
    },
    {
        name = "complex sci_mode true",
        make = function() return C(T({1.5, -2.5}, "float32"), T({1.0, 2.0}, "float32")) end,
        opts = {sci_mode = true},
        want = "[1.5000e+00+1.0000e+00j, -2.5000e+00+2.0000e+00j]",
    },
    {
        name = "complex sci_mode false",
        make = function() return C(T({1e-05, 1.0}, "float32"), T({1.0, 2.0}, "float32")) end,
        opts = {sci_mode = false},
        want = "[    0.0000+1.j,     1.0000+2.j]",
    },
    {
        name = "complex linewidth 40",
        make = function()
            return C(tide.arange(0, 10):float() / 4, tide.ones(10))
        end,
        opts = {linewidth = 40},
        want = "[0.0000+1.j, 0.2500+1.j, 0.5000+1.j,\n" ..
            " 0.7500+1.j, 1.0000+1.j, 1.2500+1.j,\n" ..
            " 1.5000+1.j, 1.7500+1.j, 2.0000+1.j,\n" ..
            " 2.2500+1.j]",
    },
    {
        name = "complex threshold 5 edgeitems 1",
        make = function()
            return C((tide.arange(0, 12):float() / 4):view(3, 4), tide.full({3, 4}, -1.5))
        end,
        opts = {threshold = 5, edgeitems = 1},
        want = "[[0.0000-1.5000j,  ..., 0.7500-1.5000j],\n" ..
            " ...,\n" ..
            " [2.0000-1.5000j,  ..., 2.7500-1.5000j]]",
    },
    {
        name = "complex summarized",
        make = function() return C(tide.arange(0, 1200):float() / 8, tide.ones(1200)) end,
        want = "[0.0000e+00+1.j, 1.2500e-01+1.j, 2.5000e-01+1.j,  ..., 1.4962e+02+1.j,\n" ..
            " 1.4975e+02+1.j, 1.4988e+02+1.j]",
    },
    -- exact ties round to even, as Python's format (LuaJIT's string.format rounds them up)
    {
        name = "complex ties precision 2",
        make = function()
            return C(T({0.125, 2.375, -0.625}, "float32"), T({1.0, 0.5, 1.0}, "float32"))
        end,
        opts = {precision = 2},
        want = "[ 0.12+1.00j,  2.38+0.50j, -0.62+1.00j]",
    },
    {
        name = "complex ties sci_mode true",
        make = function() return C(T({149.625, -1.0625}, "float32"), T({0.0, 2.0}, "float32")) end,
        opts = {sci_mode = true},
        want = "[1.4962e+02+0.0000e+00j, -1.0625e+00+2.0000e+00j]",
    },
}

describe("printing as PyTorch 1.13", function()
    for _, c in ipairs(CASES) do
        it(c.name, function()
            local got = body(c.make(), c.opts)
            if c.pending then
                -- still different: a fix in lua/format.c makes this fail, to drop the pending
                assert.are_not.equal(c.want, got)
                pending(c.pending)
                return
            end
            assert.are.equal(c.want, got)
        end)
    end

    it("keeps the options a profile sets, then the ones named", function()
        tide.set_printoptions({ profile = "short", precision = 6 })
        local o, sci = require("tide.print_options").current()
        tide.set_printoptions({ profile = "default" })
        assert.are.same({ precision = 6, threshold = 1000, edgeitems = 2, linewidth = 80 }, o)
        assert.is_nil(sci)
        tide.set_printoptions({ profile = "full" })
        o = require("tide.print_options").current()
        tide.set_printoptions({ profile = "default" })
        assert.are.equal(math.huge, o.threshold)
    end)
end)
