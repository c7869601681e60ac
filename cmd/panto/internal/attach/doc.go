// Package attach turns images into the blocks of a user message: an
// image file named in the message (@shot.png), a path pasted into the
// editor, the clipboard's image (Ctrl-V). It knows the formats a model
// takes (PNG, JPEG, GIF, WebP, told by their content, not their name),
// the size limit, and how an attached image is named to the user and to
// the model ("[image: shot.png, 1.2 MB, 1920×1080]").
//
// It does not send anything, draw anything or record anything: the front
// ends (tui, lineloop, print mode, acp) call it and hand the blocks to
// the session's turn.
package attach
