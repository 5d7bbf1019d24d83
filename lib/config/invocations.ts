/**
 * Invocations: saved function calls whose arguments may be templates over declared parameters
 * (`template:{{ .Params.tag }}`). Checked when saved: the function and every argument name must be
 * known to the toolchain, every template may name only declared parameters, and literal values must be
 * what the function takes. Rendering with a ChangeOrder's values gives the arguments `cub function set`
 * would take.
 */
import type { InvocationArgument, InvocationParameter, ToolchainType } from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';
import { bindArguments, functionParams } from './functions.ts';

const TEMPLATE = /\{\{\s*\.Params\.([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}/g;
const TEMPLATE_PREFIX = 'template:';
/** Functions run on these toolchains' data. */
const FUNCTION_TOOLCHAINS: ToolchainType[] = ['Kubernetes/YAML'];

/** `name:type:required` as `--parameter` writes it. */
export function parseParameter(text: string): InvocationParameter {
  const m = /^([A-Za-z_][A-Za-z0-9_-]{0,62}):(string|int|bool)(?::(true|false))?$/.exec(text);
  if (!m)
    throw new Invalid(
      `parameter '${text}' must be <name>:<string|int|bool>[:<required true|false>], e.g. tag:string:true`,
    );
  return { ParameterName: m[1]!, DataType: m[2] as InvocationParameter['DataType'], Required: m[3] === 'true' };
}

/** A function's arguments as typed after `--`: positional in the function's order, or `--name=value`; `template:` marks a template. */
export function parseArguments(functionName: string, args: string[]): InvocationArgument[] {
  const names = functionParams(functionName);
  const out: InvocationArgument[] = [];
  const positional: string[] = [];
  for (const a of args) {
    const m = /^--([a-z][a-z-]*)=(.*)$/s.exec(a);
    if (!m) {
      positional.push(a);
      continue;
    }
    if (!names.includes(m[1]!))
      throw new Invalid(`${functionName} has no parameter '${m[1]}'; it takes ${names.map((n) => `<${n}>`).join(' ')}`);
    out.push(argument(m[1]!, m[2]!));
  }
  for (const name of names)
    if (!out.some((x) => x.ParameterName === name) && positional.length) out.push(argument(name, positional.shift()!));
  if (positional.length)
    throw new Invalid(
      `${functionName} takes ${names.length} argument(s) (${names.map((n) => `<${n}>`).join(' ')}), got ${args.length}`,
    );
  return out;
}

/** Names positional arguments (those without a ParameterName) in the function's order: a client may send them as typed. */
export function nameArguments(call: {
  FunctionName: string;
  Arguments: (Omit<InvocationArgument, 'ParameterName'> & { ParameterName?: string })[];
}): { FunctionName: string; Arguments: InvocationArgument[] } {
  const names = functionParams(call.FunctionName);
  const given = new Set(call.Arguments.filter((a) => a.ParameterName).map((a) => a.ParameterName!));
  const free = names.filter((n) => !given.has(n));
  const positional = call.Arguments.filter((a) => !a.ParameterName);
  if (positional.length > free.length)
    throw new Invalid(
      `${call.FunctionName} takes ${names.length} argument(s) (${names.map((n) => `<${n}>`).join(' ')}), got ${call.Arguments.length}`,
    );
  let i = 0;
  return {
    FunctionName: call.FunctionName,
    Arguments: call.Arguments.map((a) => ({ ...a, ParameterName: a.ParameterName ?? free[i++]! })),
  };
}

function argument(name: string, value: string): InvocationArgument {
  return value.startsWith(TEMPLATE_PREFIX)
    ? { ParameterName: name, Value: value.slice(TEMPLATE_PREFIX.length), Evaluator: 'template' }
    : { ParameterName: name, Value: value };
}

/** Refuses an Invocation its toolchain cannot run, or whose templates name undeclared parameters. */
export function validateInvocation(
  toolchain: ToolchainType,
  calls: { FunctionName: string; Arguments: InvocationArgument[] }[],
  parameters: InvocationParameter[],
): void {
  if (!FUNCTION_TOOLCHAINS.includes(toolchain))
    throw new Invalid(
      `toolchain ${toolchain} has no functions; an Invocation runs on ${FUNCTION_TOOLCHAINS.join(', ')}`,
    );
  if (!calls.length) throw new Invalid('an Invocation needs a function to call: … -- <function> <args…>');
  const declared = new Set(parameters.map((p) => p.ParameterName));
  if (declared.size !== parameters.length) throw new Invalid('each parameter may be declared once');
  for (const call of calls) {
    const names = functionParams(call.FunctionName);
    for (const a of call.Arguments) {
      if (!names.includes(a.ParameterName))
        throw new Invalid(
          `${call.FunctionName} has no parameter '${a.ParameterName}'; it takes ${names.map((n) => `<${n}>`).join(' ')}`,
        );
      if (a.Evaluator === 'template') {
        const used = [...a.Value.matchAll(TEMPLATE)].map((m) => m[1]!);
        if (!used.length)
          throw new Invalid(
            `argument ${a.ParameterName}: a template must name a parameter as {{ .Params.<name> }}, got '${a.Value}'`,
          );
        for (const u of used)
          if (!declared.has(u))
            throw new Invalid(
              `argument ${a.ParameterName} uses parameter '${u}', which the Invocation does not declare (--parameter ${u}:string:true)`,
            );
        if (/\{\{|\}\}/.test(a.Value.replace(TEMPLATE, '')))
          throw new Invalid(
            `argument ${a.ParameterName}: only {{ .Params.<name> }} may appear in a template, got '${a.Value}'`,
          );
      }
    }
    const missing = names.filter((n) => !call.Arguments.some((a) => a.ParameterName === n));
    if (missing.length) throw new Invalid(`${call.FunctionName} needs ${missing.map((n) => `<${n}>`).join(' ')}`);
    // Literal values are checked as the function would check them; templates with a sample value that passes for their kind.
    const literal = call.Arguments.every((a) => a.Evaluator !== 'template');
    if (literal) bindArguments(call.FunctionName, render(call.Arguments, {}));
  }
}

/**
 * Parameter values for a run: each declared, required ones given, of their type. Unknown names are
 * refused, as the ChangeOrder fixes the values at creation.
 */
export function checkParameterValues(
  parameters: InvocationParameter[],
  values: Record<string, string>,
): Record<string, string> {
  for (const name of Object.keys(values))
    if (!parameters.some((p) => p.ParameterName === name))
      throw new Invalid(
        `the Invocation has no parameter '${name}'; it declares ${parameters.map((p) => p.ParameterName).join(', ') || 'none'}`,
      );
  for (const p of parameters) {
    const v = values[p.ParameterName];
    if (v === undefined) {
      if (p.Required)
        throw new Invalid(`parameter '${p.ParameterName}' is required: --param ${p.ParameterName}=<${p.DataType}>`);
      continue;
    }
    if (p.DataType === 'int' && !/^-?\d{1,15}$/.test(v))
      throw new Invalid(`parameter '${p.ParameterName}' must be an integer, got '${v}'`);
    if (p.DataType === 'bool' && v !== 'true' && v !== 'false')
      throw new Invalid(`parameter '${p.ParameterName}' must be true or false, got '${v}'`);
  }
  return values;
}

/** The arguments with templates rendered from the values, as `--name=value` words. */
export function render(args: InvocationArgument[], values: Record<string, string>): string[] {
  return args.map(
    (a) =>
      `--${a.ParameterName}=${a.Evaluator === 'template' ? a.Value.replace(TEMPLATE, (_m, name: string) => values[name] ?? '') : a.Value}`,
  );
}
