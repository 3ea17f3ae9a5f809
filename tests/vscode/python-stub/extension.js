// A stand-in for ms-python.python in tests/test_vscode.py: the environments API of
// @vscode/python-extension, with $GRADGUARD_STUB_PYTHON as the active interpreter.
const vscode = require('vscode');

exports.activate = function activate() {
  const python = process.env.GRADGUARD_STUB_PYTHON;
  const changed = new vscode.EventEmitter();
  const environment = { id: python, path: python, executable: { uri: vscode.Uri.file(python), bitness: '64-bit', sysPrefix: '' } };
  return {
    ready: Promise.resolve(),
    environments: {
      known: [environment],
      getActiveEnvironmentPath: () => ({ id: python, path: python }),
      resolveEnvironment: async () => environment,
      onDidChangeActiveEnvironmentPath: changed.event,
      onDidChangeEnvironments: new vscode.EventEmitter().event,
    },
  };
};
