-- helpers.lua — .busted's `helper`: what the suite's busted runs load before the spec files
require("spec.support.release_files") -- drops each file's closures once it has run
require("spec.support.fast_globals") -- the standard library's names read from _G at once
