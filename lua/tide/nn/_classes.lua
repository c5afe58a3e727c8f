-- tide.nn._classes: every Module class made with a name (Module:extend("Net")), by that name,
-- for tide.load to rebuild a saved module (lua/tide/checkpoint_names.lua), as Python's pickle
-- finds a class by its name. A class defined again under one name replaces the older one there,
-- as a re-run script's definition does in Python. Weak values: a class nothing else holds goes.
return setmetatable({}, { __mode = "v" })
