// The gradguard extension: runs gradguard's language server and keeps it in step with VS Code's settings.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { PythonExtension } from '@vscode/python-extension';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';

const SECTION = 'gradguard';
const PYTHON_EXTENSION = 'the Python extension';
const VERIFY_COMMAND = 'gradguard.verify'; // the server's workspace/executeCommand
// the server's command; vscode-languageclient registers each server command as a VS Code command of that
// name, so the extension's own, which shows the answer, is `gradguard.showDebugInformation`
const DEBUG_COMMAND = 'gradguard.printDebugInformation';
// VS Code setting -> the server's key (the CLI's [tool.gradguard] keys)
const RULE_SETTINGS: ReadonlyArray<[string, string]> = [
  ['select', 'select'],
  ['ignore', 'ignore'],
  ['severities', 'severities'],
  ['exclude', 'exclude'],
  ['perFileIgnores', 'per-file-ignores'],
];

// Nothing of the workspace may be imported: `python -m` would put the working folder first on
// sys.path, and a workspace's own `gradguard/` or `libcst.py` would run, trusted or not. `-I` would
// also drop the user's site-packages (`pip install --user gradguard`), so only that entry is removed
// (a PYTHONPATH the user set stays).
const SAFE_PATH = 'import sys; sys.path[:] = [p for p in sys.path if p]'; // `-c` puts the folder first, as ''
// `gradguard.importStrategy: useBundled`: the gradguard bundled in the extension (bundled/libs, made by
// scripts/bundle.sh for one platform) comes first on sys.path
const firstOnPath = (libs?: string): string[] => (libs ? [`sys.path.insert(0, ${JSON.stringify(libs)})`] : []);
const serverCode = (libs?: string): string =>
  [SAFE_PATH, ...firstOnPath(libs), 'from gradguard.__main__ import main', 'sys.exit(main())'].join('\n');

// `import gradguard` decides (with the bundle: its compiled libcst too, built for this Python or not);
// the version is only shown (a source checkout may have no metadata)
const importCheck = (libs?: string): string => [
  SAFE_PATH,
  ...firstOnPath(libs),
  `import gradguard, importlib.metadata as m${libs ? ', libcst.native' : ''}`,
  'try: print(m.version("gradguard"))',
  'except Exception: print("")',
].join('\n');

// The project's interpreter (whose torch Verify runs the code under) and the server's command are
// separate: `gradguard.interpreter` names the first, `gradguard.path` the second (a gradguard executable,
// as pipx or `uv tool` install it). Without `gradguard.path` the project's interpreter runs the server
// when gradguard is installed there, else `gradguard` on PATH does.
type Interpreter = { command: string; source: string; explicit: boolean };
type Server = { command: string; args: string[]; source: string };
type StatusKind = 'starting' | 'running' | 'disabled' | 'stopped' | 'error' | 'verifying';

/** Whether the user set `name` anywhere (not just the default from package.json). */
function isSet(cfg: vscode.WorkspaceConfiguration, name: string): boolean {
  const i = cfg.inspect(name);
  return (
    i !== undefined &&
    [i.globalValue, i.workspaceValue, i.workspaceFolderValue,
      i.globalLanguageValue, i.workspaceLanguageValue, i.workspaceFolderLanguageValue].some((v) => v !== undefined)
  );
}

/**
 * What the server gets as initializationOptions and in workspace/didChangeConfiguration.
 * Only the rule settings the user set are sent: the server then replaces the project's
 * [tool.gradguard] table with them; with none set, each file keeps its pyproject.toml's table.
 */
export function serverSettings(project?: Interpreter): { gradguard: Record<string, unknown> } {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  const table: Record<string, unknown> = {};
  for (const [name, key] of RULE_SETTINGS) {
    if (isSet(cfg, name)) table[key] = cfg.get(name);
  }
  const verify: Record<string, unknown> = {};
  if (isSet(cfg, 'verify.device')) verify.device = cfg.get('verify.device');
  if (isSet(cfg, 'verify.timeout')) verify.timeout = cfg.get('verify.timeout');
  if (Object.keys(verify).length > 0) table.verify = verify;
  table.trusted = vscode.workspace.isTrusted;
  // the project's interpreter: named by the user (as the CLI's --python), or the Python extension's choice,
  // which the server weighs after VIRTUAL_ENV, a .venv of the project and CONDA_PREFIX
  if (project?.explicit) table.interpreter = project.command;
  else if (project && project.source === PYTHON_EXTENSION) table.activeInterpreter = project.command;
  return { gradguard: table };
}

function expandPath(value: string): string {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  let expanded = value.replace(/\$\{workspaceFolder\}/g, folder).replace(/\$\{userHome\}/g, os.homedir());
  if (expanded === '~' || expanded.startsWith('~/')) expanded = path.join(os.homedir(), expanded.slice(1));
  // a relative path with a separator (`.venv/bin/python`) is relative to the workspace folder
  if (folder && !path.isAbsolute(expanded) && expanded.includes('/')) expanded = path.join(folder, expanded);
  return expanded;
}

/** The first of `gradguard.path` that exists, expanded. */
function configuredPath(): { found?: string; tried: string[] } {
  const value = vscode.workspace.getConfiguration(SECTION).get<string[] | string>('path', []);
  const tried = (Array.isArray(value) ? value : [value]).filter((v) => typeof v === 'string' && v.trim())
    .map((v) => expandPath(v.trim()));
  return { found: tried.find((p) => fs.existsSync(p)), tried };
}

function run(command: string, args: string[], timeoutMs: number): Promise<{ code: number | string; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, env: process.env }, (error, stdout, stderr) => {
      const code = error ? ((error as NodeJS.ErrnoException).code ?? 1) : 0;
      resolve({ code: code as number | string, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

class Gradguard implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private interpreter: Interpreter | undefined;
  private server: Server | undefined;
  private version = '';
  private stopping = false;
  private queue: Promise<void> = Promise.resolve();
  private readonly output = vscode.window.createOutputChannel('gradguard', { log: true });
  private readonly status = vscode.window.createStatusBarItem('gradguard.status', vscode.StatusBarAlignment.Right, 100);
  private python: PythonExtension | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly context: vscode.ExtensionContext) {
    this.status.name = 'gradguard';
    this.status.command = 'gradguard.showLogs';
    this.status.show();
    this.disposables.push(this.output, this.status);
  }

  log(message: string): void {
    this.output.info(message);
  }

  private setStatus(kind: StatusKind, detail = ''): void {
    const icons: Record<StatusKind, string> = {
      starting: '$(sync~spin)', running: '$(check)', disabled: '$(circle-slash)',
      stopped: '$(debug-stop)', error: '$(error)', verifying: '$(sync~spin)',
    };
    const words: Record<StatusKind, string> = {
      starting: 'starting', running: 'running', disabled: 'disabled',
      stopped: 'stopped', error: 'not running', verifying: 'verifying',
    };
    this.status.text = `${icons[kind]} gradguard${kind === 'running' ? '' : `: ${words[kind]}`}`;
    const tooltip = new vscode.MarkdownString(`**gradguard** ${this.version} — ${words[kind]}`);
    if (this.server) tooltip.appendMarkdown(`\n\nServer: \`${[this.server.command, ...this.server.args.filter((a) => a !== '-c' && !a.includes('\n'))].join(' ')}\` (${this.server.source})`);
    if (this.interpreter) tooltip.appendMarkdown(`\n\nProject's interpreter: \`${this.interpreter.command}\` (${this.interpreter.source})`);
    if (detail) tooltip.appendMarkdown(`\n\n${detail}`);
    tooltip.appendMarkdown('\n\nClick to show the logs.');
    this.status.tooltip = tooltip;
    this.status.backgroundColor = kind === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    void vscode.commands.executeCommand('setContext', 'gradguard.serverState', kind);
  }

  /** Runs start/stop/restart one at a time, in the order asked. */
  private enqueue(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step, step).catch((error) => this.log(`error: ${String(error)}`));
    return this.queue;
  }

  /** Stops the server and starts it again, finding the interpreter anew. */
  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.stopClient();
      await this.startClient();
    });
  }

  activate(): void {
    const ctx = this.context;
    this.disposables.push(
      vscode.commands.registerCommand('gradguard.restartServer', () => this.restart()),
      vscode.commands.registerCommand('gradguard.showLogs', () => this.output.show(true)),
      vscode.commands.registerCommand('gradguard.showDebugInformation', () => this.printDebugInformation()),
      vscode.commands.registerCommand('gradguard.verifyCurrentModule', (uri?: vscode.Uri) => this.verify(uri)),
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.log('workspace trusted: restarting (the workspace interpreter setting now applies)');
        void this.restart();
      }),
    );
    ctx.subscriptions.push(this);
    void this.enqueue(() => this.startClient());
  }

  private onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration(SECTION)) return;
    if (['enable', 'interpreter', 'path', 'importStrategy'].some((name) => e.affectsConfiguration(`${SECTION}.${name}`))) {
      this.log('gradguard.enable, gradguard.interpreter, gradguard.path or gradguard.importStrategy changed: restarting the server');
      void this.restart();
      return;
    }
    void this.enqueue(() => this.sendSettings());
  }

  private async sendSettings(): Promise<void> {
    if (!this.client || this.client.state !== State.Running) return;
    const settings = serverSettings(this.interpreter);
    this.log(`settings changed: sending ${JSON.stringify(settings)}`);
    await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings });
  }

  /** `gradguard.interpreter`, the Python extension's active interpreter, `python3`. */
  private async resolveInterpreter(): Promise<Interpreter> {
    const configured = vscode.workspace.getConfiguration(SECTION).get<string>('interpreter', '').trim();
    if (configured) return { command: expandPath(configured), source: 'gradguard.interpreter', explicit: true };
    if (vscode.extensions.getExtension('ms-python.python')) {
      try {
        if (!this.python) {
          this.python = await PythonExtension.api();
          this.disposables.push(this.python.environments.onDidChangeActiveEnvironmentPath(() => {
            if (vscode.workspace.getConfiguration(SECTION).get<string>('interpreter', '').trim()) return;
            this.log('the Python extension changed the active interpreter: restarting the server');
            void this.restart();
          }));
        }
        const resource = vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
        const active = this.python.environments.getActiveEnvironmentPath(resource);
        const resolved = await this.python.environments.resolveEnvironment(active);
        const executable = resolved?.executable.uri?.fsPath;
        if (executable) return { command: executable, source: PYTHON_EXTENSION, explicit: false };
        this.log(`the Python extension's active environment ${active.path} has no executable; using python3`);
      } catch (error) {
        this.log(`could not ask the Python extension for its interpreter: ${String(error)}`);
      }
    }
    return { command: 'python3', source: 'the default', explicit: false };
  }

  /**
   * The server's command: `gradguard.path`, else the project's interpreter when gradguard is installed
   * there (`python -c "import gradguard"`), else `gradguard` on PATH. Says how to install it otherwise.
   */
  private async findServer(interpreter: Interpreter): Promise<Server | undefined> {
    const { found, tried } = configuredPath();
    if (tried.length > 0) {
      if (found) {
        const probe = await run(found, ['--version'], 30000);
        if (probe.code === 0) {
          this.version = probe.stdout.trim().replace(/^gradguard\s+/, '');
          return { command: found, args: ['lsp'], source: 'gradguard.path' };
        }
        this.log(`${found} --version failed (${String(probe.code)}):\n${probe.stderr.trim()}`);
      }
      const reason = found ? `\`${found}\` (from gradguard.path) is not a working gradguard.`
        : `None of gradguard.path exists: ${tried.map((t) => `\`${t}\``).join(', ')}.`;
      this.log(reason);
      this.setStatus('error', reason);
      void vscode.window.showErrorMessage(`gradguard: ${reason.replace(/`/g, "'")}`, 'Open Settings').then(async (choice) => {
        if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'gradguard.path');
      });
      return undefined;
    }
    const bundled = await this.bundledServer(interpreter);
    if (bundled) return bundled;
    const probe = await run(interpreter.command, ['-c', importCheck()], 30000);
    if (probe.code === 0) {
      this.version = probe.stdout.trim();
      return { command: interpreter.command, args: ['-c', serverCode(), 'lsp'], source: interpreter.source };
    }
    this.log(`gradguard is not importable by ${interpreter.command} (${String(probe.code)}):\n${probe.stderr.trim()}`);
    const onPath = await run('gradguard', ['--version'], 30000);
    if (onPath.code === 0) {
      this.version = onPath.stdout.trim().replace(/^gradguard\s+/, '');
      return { command: 'gradguard', args: ['lsp'], source: 'gradguard on PATH' };
    }
    const missing = probe.code === 'ENOENT';
    const reason = missing
      ? `Python interpreter \`${interpreter.command}\` (from ${interpreter.source}) was not found, and no gradguard is on PATH.`
      : `gradguard is not installed for \`${interpreter.command}\` (from ${interpreter.source}), nor on PATH.`;
    this.log(reason);
    this.setStatus('error', reason);
    const install = `"${interpreter.command}" -m pip install gradguard`;
    const actions = missing ? ['Open Settings', 'Show Logs'] : ['Install in Terminal', 'Copy Command', 'Open Settings'];
    // VS Code hides a restricted setting's workspace value (even from inspect()) until the workspace is trusted
    const restricted = !vscode.workspace.isTrusted && interpreter.source !== 'gradguard.interpreter'
      ? ' (Restricted Mode: gradguard.interpreter and gradguard.path in the workspace settings apply once you trust the workspace.)' : '';
    const text = missing
      ? `${reason.replace(/`/g, "'")} Set gradguard.path to a gradguard executable (pipx install gradguard), or gradguard.interpreter to a Python with gradguard installed.${restricted}`
      : `${reason.replace(/`/g, "'")} Install it with: ${install} (or pipx install gradguard, then set gradguard.path)${restricted}`;
    void vscode.window.showErrorMessage(text, ...actions).then(async (choice) => {
      if (choice === 'Install in Terminal') {
        const terminal = vscode.window.createTerminal('gradguard install');
        terminal.show();
        terminal.sendText(install);
      } else if (choice === 'Copy Command') {
        await vscode.env.clipboard.writeText(install);
      } else if (choice === 'Open Settings') {
        await vscode.commands.executeCommand('workbench.action.openSettings', 'gradguard.interpreter');
      } else if (choice === 'Show Logs') {
        this.output.show(true);
      }
    });
    return undefined;
  }

  /**
   * `gradguard.importStrategy: useBundled` (the default): the gradguard bundled in this platform's package
   * of the extension, run by the project's interpreter. Undefined, saying why in the log, for
   * `fromEnvironment`, for a package without the bundle, or an interpreter the bundle was not built for.
   */
  private async bundledServer(interpreter: Interpreter): Promise<Server | undefined> {
    const strategy = vscode.workspace.getConfiguration(SECTION).get<string>('importStrategy', 'useBundled');
    if (strategy !== 'useBundled') return undefined;
    const libs = path.join(this.context.extensionPath, 'bundled', 'libs');
    if (!fs.existsSync(libs)) {
      this.log('this package of the extension bundles no server (see `make vscode-platform`): using the environment\'s gradguard');
      return undefined;
    }
    const probe = await run(interpreter.command, ['-c', importCheck(libs)], 30000);
    if (probe.code !== 0) {
      this.log(`the bundled gradguard does not run with ${interpreter.command} (${String(probe.code)}), using the environment's:\n${probe.stderr.trim()}`);
      return undefined;
    }
    this.version = probe.stdout.trim();
    return { command: interpreter.command, args: ['-c', serverCode(libs), 'lsp'], source: `bundled, run by ${interpreter.source}` };
  }

  private async startClient(): Promise<void> {
    if (!vscode.workspace.getConfiguration(SECTION).get<boolean>('enable', true)) {
      this.log('gradguard.enable is false: not starting the server');
      this.setStatus('disabled', 'Set `gradguard.enable` to start it.');
      return;
    }
    this.setStatus('starting');
    this.interpreter = await this.resolveInterpreter();
    this.log(`interpreter: ${this.interpreter.command} (${this.interpreter.source})`);
    this.server = await this.findServer(this.interpreter);
    if (!this.server) return;
    this.log(`server: ${this.server.command} (${this.server.source})`);

    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = {
      command: this.server.command,
      args: this.server.args, // `gradguard lsp`; the client appends --stdio
      transport: TransportKind.stdio,
      options: { cwd: folder, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      // Python files, and the Python cells of Jupyter notebooks: the server syncs a notebook whole
      // (LSP notebook sync: its cells are one program) and publishes to each cell
      documentSelector: [{ scheme: 'file', language: 'python' }, { notebook: 'jupyter-notebook', language: 'python' }],
      initializationOptions: serverSettings(this.interpreter),
      outputChannel: this.output,
      traceOutputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      middleware: this.middleware(),
    };
    const client = new LanguageClient(SECTION, 'gradguard', serverOptions, clientOptions);
    client.onDidChangeState((e) => {
      if (client !== this.client) return;
      if (e.newState === State.Running) this.setStatus('running');
      else if (e.newState === State.Starting) this.setStatus('starting');
      else if (!this.stopping) this.setStatus('error', 'The server stopped. Run **gradguard: Restart Server**.');
    });
    this.client = client;
    try {
      await client.start();
      this.log(`gradguard ${this.version} running: ${this.server.command} ${this.server.args[0] === '-c' ? '-c <gradguard lsp>' : 'lsp'}`);
      this.setStatus('running');
    } catch (error) {
      this.log(`the server did not start: ${String(error)}`);
      this.setStatus('error', 'The server did not start; see the logs.');
      void vscode.window.showErrorMessage(`gradguard: the language server did not start (${this.server.command} running gradguard lsp).`,
        'Show Logs').then((choice) => { if (choice) this.output.show(true); });
    }
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.stopping = true;
    try {
      if (client.isRunning()) await client.stop(5000);
      else await client.dispose(5000);
    } catch (error) {
      this.log(`error while stopping the server: ${String(error)}`);
    } finally {
      this.client = undefined;
      this.stopping = false;
      this.setStatus('stopped');
    }
  }

  /** `gradguard.showDebugInformation`: the extension's view and the server's, in the output channel. */
  private async printDebugInformation(): Promise<void> {
    const client = this.client;
    const extension = [
      `gradguard extension ${String(this.context.extension.packageJSON.version)}; VS Code ${vscode.version}`,
      `Import strategy: ${vscode.workspace.getConfiguration(SECTION).get<string>('importStrategy', 'useBundled')}`,
      `Server: ${this.server ? `${this.server.command} (${this.server.source})` : 'none'}`,
      `Project's interpreter: ${this.interpreter ? `${this.interpreter.command} (${this.interpreter.source})` : 'none'}`,
    ].join('\n');
    let server = 'The server is not running.';
    if (client && client.state === State.Running) {
      const commands = client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
      server = commands.includes(DEBUG_COMMAND)
        ? String(await client.sendRequest(ExecuteCommandRequest.type, { command: DEBUG_COMMAND, arguments: [] }))
        : `This server (gradguard ${this.version}) has no ${DEBUG_COMMAND}; update gradguard.`;
    }
    this.output.info(`debug information:\n${extension}\n${server}`);
    this.output.show(true);
  }

  /** `gradguard.verifyCurrentModule`: verifies the module in the active editor (or the one clicked on). */
  private async verify(uri?: vscode.Uri): Promise<void> {
    const document = uri ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString())
      : vscode.window.activeTextEditor?.document;
    const target = uri ?? document?.uri;
    if (!target || (document && document.languageId !== 'python')) {
      void vscode.window.showWarningMessage('gradguard: open a Python file to verify it.');
      return;
    }
    const client = this.client;
    if (!client || client.state !== State.Running) {
      void vscode.window.showWarningMessage('gradguard: the server is not running.', 'Show Logs')
        .then((choice) => { if (choice) this.output.show(true); });
      return;
    }
    const commands = client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    if (!commands.includes(VERIFY_COMMAND)) {
      void vscode.window.showWarningMessage(
        `gradguard: this server (gradguard ${this.version}) cannot verify modules; update gradguard (${this.server?.command}).`);
      return;
    }
    if (document?.isDirty) await document.save(); // the server runs the file on disk
    await this.runVerify(client, [client.code2ProtocolConverter.asUri(target)],
      (command, args) => client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }));
  }

  /**
   * Every `gradguard.verify` goes through here: this command's and the server's code lenses'
   * (through the client's executeCommand middleware). It runs the user's code, so never untrusted.
   */
  private async runVerify(client: LanguageClient, args: unknown[],
    send: (command: string, args: unknown[]) => Promise<unknown>): Promise<unknown> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('gradguard: verification runs your code, so it is disabled in an untrusted workspace.');
      return undefined;
    }
    const name = typeof args[0] === 'string' ? path.basename(vscode.Uri.parse(args[0]).fsPath) : 'the module';
    const what = typeof args[1] === 'string' ? `${args[1]} in ${name}` : name;
    this.setStatus('verifying');
    this.log(`verifying ${JSON.stringify(args)}`);
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `gradguard: verifying ${what}…` },
        () => send(VERIFY_COMMAND, args));
      this.log(`verification result: ${JSON.stringify(result)}`);
      const { text, problem } = describeVerification(result);
      const show = problem ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
      void show(`gradguard: ${what}: ${text}`, 'Show Logs').then((choice) => { if (choice) this.output.show(true); });
      return result;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log(`verification failed: ${message}`);
      void vscode.window.showErrorMessage(`gradguard: verification of ${what} failed: ${message}`);
      return undefined;
    } finally {
      if (this.client === client && client.state === State.Running) this.setStatus('running');
    }
  }

  /** The client's middleware: lenses and other callers of `gradguard.verify` get the same checks and UI. */
  middleware(): LanguageClientOptions['middleware'] {
    return {
      executeCommand: (command, args, next) => {
        if (command !== VERIFY_COMMAND || !this.client) return next(command, args);
        const client = this.client;
        return this.runVerify(client, args, (c, a) => Promise.resolve(next(c, a)));
      },
    };
  }

  async shutdown(): Promise<void> {
    await this.enqueue(() => this.stopClient());
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** A one-line summary of the server's answer to `gradguard.verify`. */
export function describeVerification(result: unknown): { text: string; problem: boolean } {
  if (typeof result === 'string') return { text: result, problem: false };
  if (!result || typeof result !== 'object') return { text: 'done; see the logs.', problem: false };
  const r = result as { device?: unknown; problem?: unknown; findings?: unknown; message?: unknown };
  const on = typeof r.device === 'string' && r.device ? ` on ${r.device}` : '';
  const problem = typeof r.problem === 'string' && r.problem ? r.problem : undefined;
  if (Array.isArray(r.findings)) {
    const origins: Record<string, string> = { both: 'confirmed by the run', runtime: 'found by the run', static: 'not seen in the run' };
    // GV002 says that the run did not complete: `problem` says it in full
    const items = r.findings.filter((f: { code?: unknown }) => !(problem && f.code === 'GV002'))
      .map((f: { code?: unknown; cell?: unknown; line?: unknown; origin?: unknown }) =>
        `${String(f.code)} ${typeof f.cell === 'number' ? `cell ${f.cell}, ` : ''}line ${String(f.line)}` +
        `${f.origin ? ` (${origins[String(f.origin)] ?? String(f.origin)})` : ''}`);
    const summary = `ran${on}; ${items.length === 0 ? 'no findings' : `${items.length} finding${items.length > 1 ? 's' : ''}: ${items.join(', ')}`}.`;
    return problem ? { text: `${summary} The run did not complete: ${problem}`, problem: true } : { text: summary, problem: false };
  }
  if (problem) return { text: `the run${on} did not complete: ${problem}`, problem: true };
  return { text: typeof r.message === 'string' ? r.message : 'done; see the logs.', problem: false };
}

let instance: Gradguard | undefined;

export function activate(context: vscode.ExtensionContext): void {
  instance = new Gradguard(context);
  instance.activate();
}

export async function deactivate(): Promise<void> {
  await instance?.shutdown();
}
