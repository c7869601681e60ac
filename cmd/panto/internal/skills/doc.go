// Package skills finds the Agent Skills (agentskills.io) and the prompt
// templates of panto's layers: which folders hold them, which one of a
// name wins, and what a file that cannot be read says. It also writes the
// skills' index (the skills:index section of the system prompt) and
// expands a template's arguments.
//
// It only reads files. Recording the index, and the user messages a
// /skill:NAME or a template makes, is the host's and the app's job; a
// skill's scripts run through the bash tool, under the permission rules,
// never from here.
package skills
