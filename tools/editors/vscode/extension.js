// extension.js - starts `mlsc lsp` for .mls files.
//
// Highlighting comes from the grammar that package.json declares and needs
// none of this: when the server cannot start (no `mlsc`, or `npm install`
// not run), the extension says so once and .mls files stay highlighted.
'use strict';

const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

let client;

/// The file that `command` runs: itself when it names a path, else the
/// first match on PATH (with PATHEXT's extensions on Windows); undefined
/// when there is none.
function resolveCommand(command) {
  const isFile = (p) => {
    try {
      return fs.statSync(p).isFile();
    } catch (e) {
      return false;
    }
  };
  if (command.includes('/') || command.includes('\\'))
    return isFile(command) ? command : undefined;
  const extensions = process.platform === 'win32'
    ? (process.env.PATHEXT || '.EXE;.CMD;.BAT').split(';').concat([''])
    : [''];
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    for (const ext of extensions) {
      const candidate = path.join(dir, command + ext);
      if (dir && isFile(candidate))
        return candidate;
    }
  }
  return undefined;
}

async function startServer() {
  const configured = vscode.workspace.getConfiguration('mls').get('server.path') || 'mlsc';
  const command = resolveCommand(configured);
  if (!command) {
    vscode.window.showWarningMessage(
      `MLS: \`${configured}\` was not found, so diagnostics, hover and completion are off ` +
      '(highlighting still works). Set `mls.server.path` to the mlsc driver.');
    return;
  }
  let languageclient;
  try {
    languageclient = require('vscode-languageclient/node');
  } catch (e) {
    vscode.window.showWarningMessage(
      'MLS: the language client is not installed; run `npm install` in the extension ' +
      'folder to use `mlsc lsp` (highlighting still works).');
    return;
  }
  const { LanguageClient, TransportKind } = languageclient;
  const serverOptions = { command, args: ['lsp'], transport: TransportKind.stdio };
  const clientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'mls' },
      { scheme: 'untitled', language: 'mls' },
    ],
    outputChannelName: 'MLS language server',
  };
  client = new LanguageClient('mls', 'MLS language server', serverOptions, clientOptions);
  try {
    await client.start();
  } catch (e) {
    client = undefined;
    vscode.window.showWarningMessage(
      `MLS: \`${command} lsp\` did not start (${e && e.message ? e.message : e}); ` +
      'highlighting still works.');
  }
}

async function stopServer() {
  if (!client)
    return;
  const running = client;
  client = undefined;
  try {
    await running.stop();
  } catch (e) {
    // The server had already gone; nothing is left to stop.
  }
}

function activate(context) {
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration(async (event) => {
    if (event.affectsConfiguration('mls.server.path')) {
      await stopServer();
      await startServer();
    }
  }));
  return startServer();
}

function deactivate() {
  return stopServer();
}

module.exports = { activate, deactivate };
