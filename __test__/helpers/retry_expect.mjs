// The texts of specs/retry.md, written out independently of the Rust engine,
// so the retry suites compare the plugin's output with the spec byte for byte.

export const RESPONSE_TYPE = 'ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN';

export function retryText(name, details, args, n, max) {
  return `The call to tool \`${name}\` failed.

**Error Details:**
\`\`\`
${details}
\`\`\`

**Tool Arguments Used:**
\`\`\`json
${args}
\`\`\`

**Reflection Guidance:**
This is retry attempt **${n} of ${max}**. Analyze the error and the arguments you provided. Do not repeat the exact same call. Consider the following before your next attempt:

1.  **Invalid Parameters**: Does the error suggest that one or more arguments are incorrect, badly formatted, or missing? Review the tool's schema and your arguments.
2.  **State or Preconditions**: Did a previous step fail or not produce the necessary state/resource for this tool to succeed?
3.  **Alternative Approach**: Is this the right tool for the job? Could another tool or a different sequence of steps achieve the goal?
4.  **Simplify the Task**: Can you break the problem down into smaller, simpler steps?
5.  **Wrong Function Name**: Does the error indicates the tool is not found? Please check again and only use available tools.

Formulate a new plan based on your analysis and try a corrected or different approach.`;
}

function lastText(first, name, details, args) {
  return `${first}

**Last Error:**
\`\`\`
${details}
\`\`\`

**Last Arguments Used:**
\`\`\`json
${args}
\`\`\`

**Final Instruction:**
**Do not attempt to use the \`${name}\` tool again for this task.** You must now try a different approach. Acknowledge the failure and devise a new strategy, potentially using other available tools or informing the user that the task cannot be completed.`;
}

export function exceededText(name, details, args, max) {
  return lastText(
    `The tool \`${name}\` has failed consecutively ${max} times and the retry limit has been exceeded.`,
    name,
    details,
    args,
  );
}

export function notRetryableText(name, details, args) {
  return lastText(`The tool \`${name}\` failed with an error that retrying cannot fix.`, name, details, args);
}

export function notFoundText(name, tools) {
  return `Invoking \`${name}()\` failed as no tool with that name is available. The tools you can call are: ${tools.length ? tools.join(', ') : 'none'}. You could retry, but it is IMPORTANT that you only call a tool from that list.`;
}

export function args(value) {
  return JSON.stringify(value ?? {}, null, 2);
}

/** The whole function response for a handled failure. */
export function handled(errorType, errorDetails, retryCount, guidance) {
  return {
    response_type: RESPONSE_TYPE,
    error_type: errorType,
    error_details: errorDetails,
    retry_count: retryCount,
    reflection_guidance: guidance,
  };
}
