package sdk

// PluginFor is the go-plugin glue Serve uses, for the tests that serve an
// extension in-process (plugin.TestPluginGRPCConn).
var PluginFor = pluginFor
