-- busted_helper.lua — .busted's `helper`: the suite's two changes to how busted runs it.
dofile("spec/support/release_files.lua") -- a file's blocks let go once it has run
dofile("spec/support/standard_globals.lua") -- standard globals read without busted's walk
