console.log('hello')
