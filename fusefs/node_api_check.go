package fusefs

import "github.com/hanwen/go-fuse/v2/fs"

// Compile-time checks of the operations each node kind implements. A
// missing Unlink or Rmdir would succeed silently in go-fuse; a missing
// Open or Setattr would return ENOTSUP.
var (
	_ = (fs.NodeGetattrer)((*node)(nil))
	_ = (fs.NodeSetattrer)((*node)(nil))
	_ = (fs.NodeGetxattrer)((*node)(nil))
	_ = (fs.NodeSetxattrer)((*node)(nil))
	_ = (fs.NodeRemovexattrer)((*node)(nil))
	_ = (fs.NodeListxattrer)((*node)(nil))
	_ = (fs.NodeStatfser)((*node)(nil))
	_ = (fs.NodeOnForgetter)((*node)(nil))

	_ = (fs.NodeLookuper)((*dirNode)(nil))
	_ = (fs.NodeReaddirer)((*dirNode)(nil))
	_ = (fs.NodeCreater)((*dirNode)(nil))
	_ = (fs.NodeMkdirer)((*dirNode)(nil))
	_ = (fs.NodeMknoder)((*dirNode)(nil))
	_ = (fs.NodeSymlinker)((*dirNode)(nil))
	_ = (fs.NodeLinker)((*dirNode)(nil))
	_ = (fs.NodeUnlinker)((*dirNode)(nil))
	_ = (fs.NodeRmdirer)((*dirNode)(nil))
	_ = (fs.NodeRenamer)((*dirNode)(nil))
	_ = (fs.NodeFsyncer)((*dirNode)(nil))

	_ = (fs.NodeLookuper)((*rootNode)(nil))
	_ = (fs.NodeReaddirer)((*rootNode)(nil))
	_ = (fs.NodeUnlinker)((*rootNode)(nil))
	_ = (fs.NodeRmdirer)((*rootNode)(nil))
	_ = (fs.NodeRenamer)((*rootNode)(nil))
	_ = (fs.NodeLookupNoder)((*rootNode)(nil))
	_ = (fs.NodeLookupParenter)((*dirNode)(nil))

	_ = (fs.NodeOpener)((*fileNode)(nil))
	_ = (fs.FileReader)((*fileHandle)(nil))
	_ = (fs.FileWriter)((*fileHandle)(nil))
	_ = (fs.FileFlusher)((*fileHandle)(nil))
	_ = (fs.FileFsyncer)((*fileHandle)(nil))
	_ = (fs.FileReleaser)((*fileHandle)(nil))
	_ = (fs.FileGetattrer)((*fileHandle)(nil))
	_ = (fs.FileAllocater)((*fileHandle)(nil))
	_ = (fs.FileLseeker)((*fileHandle)(nil))

	_ = (fs.NodeReadlinker)((*leafNode)(nil))

	_ = (fs.NodeLookuper)((*metaDir)(nil))
	_ = (fs.NodeReaddirer)((*metaDir)(nil))
	_ = (fs.NodeUnlinker)((*metaDir)(nil))
	_ = (fs.NodeRmdirer)((*metaDir)(nil))
	_ = (fs.NodeCreater)((*metaDir)(nil))
	_ = (fs.NodeMkdirer)((*metaDir)(nil))
	_ = (fs.NodeRenamer)((*metaDir)(nil))
	_ = (fs.NodeOpener)((*genFile)(nil))
	_ = (fs.NodeGetattrer)((*genFile)(nil))
	_ = (fs.NodeSetattrer)((*genFile)(nil))
	_ = (fs.FileReader)((*snapshot)(nil))

	_ = (fs.NodeLookuper)((*historyDir)(nil))
	_ = (fs.NodeReaddirer)((*historyDir)(nil))
	_ = (fs.NodeLookuper)((*historyFile)(nil))
	_ = (fs.NodeReaddirer)((*historyFile)(nil))
	_ = (fs.NodeOpener)((*policyFile)(nil))
	_ = (fs.NodeGetattrer)((*policyFile)(nil))
	_ = (fs.NodeSetattrer)((*policyFile)(nil))
	_ = (fs.FileReader)((*policyHandle)(nil))
	_ = (fs.FileWriter)((*policyHandle)(nil))
	_ = (fs.FileFlusher)((*policyHandle)(nil))
	_ = (fs.FileFsyncer)((*policyHandle)(nil))
	_ = (fs.FileReleaser)((*policyHandle)(nil))
)
